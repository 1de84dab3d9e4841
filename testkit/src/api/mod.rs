//! An in-memory kube-apiserver: the cluster the tests run against (no real one can be
//! installed on the development machines), as strict as the real one. A `kube::Client` talks
//! to it in-process ([`ApiServer::client`], [`ApiServer::client_with_token`]) or over HTTP
//! ([`ApiServer::serve_on_loopback`], for real processes through a kubeconfig); kubectl needs
//! HTTPS ([`ApiServer::serve_tls_on_loopback`], [`tls`]: client-go sends a kubeconfig's token
//! only to an `https://` server). `testkit/tests/kubectl.rs` drives it with the real kubectl
//! 1.32 (cluster.md §8).
//!
//! What it models (cluster.md §2, each rule naming the upstream function it follows):
//! - the built-in kinds of [`resources::builtins`] and the resources of every CRD stored,
//!   with discovery; any other path is a 404 (R8.1);
//! - OpenAPI v3: the `/openapi/v3` index and a document per group-version with every
//!   operation and its query parameters, which kubectl reads before `--validate=strict`
//!   ([`openapi`], R8.4);
//! - JSON request bodies, and protobuf ones (typed Go clients: `kubectl create namespace`,
//!   `kubectl auth can-i`) for the few kinds [`protobuf`] decodes; answers are JSON whatever
//!   the `Accept` (clients take JSON after protobuf or Table);
//! - authentication by bearer token (unknown: 401; none over HTTP: `system:anonymous`),
//!   impersonation by the admin, and RBAC from the stored Roles and bindings with the
//!   apiserver's 403 bodies ([`rbac`], R2.1), `SelfSubjectAccessReview` and
//!   `SelfSubjectRulesReview` (R8.6);
//! - `Status` bodies with the exact messages ([`status`], R2.1): 404, 409 AlreadyExists and
//!   Conflict (resourceVersion preconditions, R2.3), 422 (a CR update without
//!   resourceVersion, schema violations), 400, 403, 410, 415;
//! - one resourceVersion counter, `generation`, `generateName`, the status subresource
//!   ([`store`], R2.4, R2.5); owner references without a version, kind, name or uid are
//!   refused (422, `validateOwnerReference`);
//! - custom resources: pruning with the `fieldValidation` directive, defaulting and
//!   validation against the CRD's structural schema ([`schema`], R2.13–R2.15), conversion
//!   between served versions, through the CRD's conversion webhook over TLS ([`convert`],
//!   §3), deprecation warnings, `storedVersions`;
//! - list with label and field selectors ([`selectors`], R2.10) and pagination; watch with
//!   history replay, `410 Expired` for a resourceVersion older than the history window
//!   (R2.7, R2.8), bookmarks (R2.9), selector transitions as ADDED/DELETED;
//! - merge, JSON and apply patches ([`patch`], R2.11, R2.12); an apply patch with a field the
//!   CRD's schema does not declare fails its typed conversion (500, whatever
//!   `fieldValidation` says);
//! - deletion with finalizers, propagation policies, owner-reference garbage collection, the
//!   CRD cleanup finalizer, namespace termination and `NamespaceLifecycle` admission
//!   ([`gc`], R2.16–R2.20).
//!
//! - aggregated APIs (an `APIService`'s group served by another server, such as OLM's
//!   package-server), proxied after authorization and listed by discovery ([`aggregated`]).
//!
//! CEL validation rules (`x-kubernetes-validations`) are evaluated for the part of CEL that
//! OLM v1's CRDs use ([`cel`]); server-side dry run (`dryRun=All`) is modelled on create.
//!
//! Not modelled (a test that needs one of these must add it): admission webhooks, the rest of
//! CEL (such rules are not evaluated: [`cel::unsupported_rules`]), dry run of other writes
//! (refused with 400), Table output
//! (clients fall back to JSON: kubectl prints NAME and AGE, not a CRD's printer columns),
//! OpenAPI v2 and the schemas of OpenAPI v3 (`kubectl explain` has nothing to show),
//! `managedFields` and field ownership of non-apply writes, aggregated discovery, protobuf
//! answers and protobuf bodies of other kinds (415), HTTP/2.

pub mod aggregated;
pub mod cel;
pub mod convert;
pub mod gc;
pub mod openapi;
pub mod patch;
pub mod protobuf;
/// The RBAC authorizer.
pub mod rbac;
pub mod resources;
/// CRD structural schemas: pruning, defaulting and validation of custom resources.
pub mod schema;
/// Label and field selectors.
pub mod selectors;
mod server;
pub mod status;
pub mod store;
pub mod tls;

pub use server::{ADMIN_TOKEN, ApiServer, Body, Changes, Hook, Logged, WithToken, kubeconfig};
