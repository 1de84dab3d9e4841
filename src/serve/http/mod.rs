//! catalogd's HTTP API (`olmctl catalog serve --http`): `GET|HEAD
//! /catalogs/{catalog}/api/v1/all` and `/api/v1/metas?schema=&package=&name=`, answered as
//! operator-controller v1.11's catalogd answers them (`internal/catalogd/server`,
//! `internal/catalogd/storage`, `internal/catalogd/serverutil` at df2c201d).
//!
//! - [`meta`]: a blob's `schema`/`package`/`name` as operator-registry's `Meta` finds them;
//! - [`store`]: `catalog.jsonl` written as catalogd writes it, to an unlinked scratch file;
//! - [`index`]: the metas index of byte sections;
//! - [`date`], [`url`], [`precond`]: Go's HTTP dates, query and path rules, and conditional
//!   and range requests;
//! - [`handlers`]: the routes and answers as values;
//! - [`multipart`]: a multipart answer, its parts made as they are sent;
//! - [`body`]: the answer streamed from the file, gzip on the way;
//! - [`server`]: hyper, gzhttp's rules, the bounds and the graceful stop.

pub mod body;
pub mod date;
pub mod handlers;
pub mod index;
pub mod meta;
pub mod multipart;
pub mod precond;
pub mod server;
pub mod store;
pub mod url;
