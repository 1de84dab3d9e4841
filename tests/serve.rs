//! `olmctl catalog serve` on the v4.18 fixture, called with a real gRPC client (tonic) on
//! 127.0.0.1: health, reflection, and the RPCs answered so far, with the expected values worked
//! out from the fixture data here, independently of the server code.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use olmctl::serve::api;
use olmctl::serve::api::registry_client::RegistryClient;
use serde_json::Value;
use tonic_health::pb::health_client::HealthClient;

struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn start(dir: &std::path::Path) -> Server {
    let port = free_port();
    let child = Command::new(common::olmctl_bin())
        .args(["catalog", "serve"])
        .arg(dir)
        .args(["--port", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start olmctl catalog serve");
    Server { child, port }
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Connects once health says SERVING (the catalog is loaded); gives up after 60 s.
async fn connect(port: u16) -> tonic::transport::Channel {
    let url = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(ch) = tonic::transport::Endpoint::from_shared(url.clone())
            .unwrap()
            .connect()
            .await
        {
            let mut h = HealthClient::new(ch.clone());
            let r = h
                .check(tonic_health::pb::HealthCheckRequest {
                    service: String::new(),
                })
                .await;
            if let Ok(r) = r
                && r.get_ref().status
                    == tonic_health::pb::health_check_response::ServingStatus::Serving as i32
            {
                return ch;
            }
        }
        assert!(
            Instant::now() < deadline,
            "the server did not become SERVING"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Every blob of the fixture as JSON.
fn blobs() -> Vec<Value> {
    let mut docs = Vec::new();
    for f in walk(&common::fixture_catalog()) {
        let text = std::fs::read_to_string(&f).unwrap();
        for d in text.split("\n---") {
            if let Some(v) = olmctl::fbc::yaml::first_document(d).ok().flatten() {
                docs.push(serde_json::from_str::<Value>(&v.to_json()).unwrap());
            }
        }
    }
    docs
}

/// What the fixture says: package -> (default channel, channel -> head), read straight from the
/// JSON/YAML blobs with the head rule (the entry no other entry replaces or skips).
fn expected() -> BTreeMap<String, (String, BTreeMap<String, String>)> {
    let mut out: BTreeMap<String, (String, BTreeMap<String, String>)> = BTreeMap::new();
    let docs = blobs();
    for d in &docs {
        if d["schema"] == "olm.package" {
            let name = d["name"].as_str().unwrap().to_string();
            out.entry(name).or_default().0 = d["defaultChannel"].as_str().unwrap().into();
        }
    }
    for d in &docs {
        if d["schema"] != "olm.channel" {
            continue;
        }
        let entries = d["entries"].as_array().unwrap();
        let mut replaced = BTreeSet::new();
        for e in entries {
            if let Some(r) = e["replaces"].as_str() {
                replaced.insert(r.to_string());
            }
            for s in e["skips"].as_array().into_iter().flatten() {
                replaced.insert(s.as_str().unwrap().to_string());
            }
        }
        let heads: Vec<&str> = entries
            .iter()
            .map(|e| e["name"].as_str().unwrap())
            .filter(|n| !replaced.contains(*n))
            .collect();
        assert_eq!(heads.len(), 1, "{d}");
        out.get_mut(d["package"].as_str().unwrap())
            .unwrap()
            .1
            .insert(d["name"].as_str().unwrap().into(), heads[0].into());
    }
    out
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    common::files_in(dir)
        .into_iter()
        .filter(|p| {
            p.extension()
                .is_some_and(|x| x == "yaml" || x == "yml" || x == "json")
        })
        .collect()
}

#[test]
fn packages_and_channels_as_opm_serves_them() {
    let want = expected();
    assert!(want.len() > 10, "{}", want.len());
    let server = start(&common::fixture_catalog());
    rt().block_on(async {
        let ch = connect(server.port).await;
        let mut c = RegistryClient::new(ch);
        let mut names = Vec::new();
        let mut s = c
            .list_packages(api::ListPackageRequest {})
            .await
            .unwrap()
            .into_inner();
        while let Some(p) = s.message().await.unwrap() {
            names.push(p.name);
        }
        assert_eq!(names, want.keys().cloned().collect::<Vec<_>>());
        for (name, (default, channels)) in &want {
            let p = c
                .get_package(api::GetPackageRequest { name: name.clone() })
                .await
                .unwrap()
                .into_inner();
            assert_eq!(&p.name, name);
            assert_eq!(&p.default_channel_name, default, "{name}");
            let got: Vec<(String, String)> = p
                .channels
                .iter()
                .map(|c| (c.name.clone(), c.csv_name.clone()))
                .collect();
            let want: Vec<(String, String)> = channels
                .iter()
                .map(|(a, b)| (a.clone(), b.clone()))
                .collect();
            assert_eq!(
                got, want,
                "{name}: channels sorted by name with their heads"
            );
        }
        let e = c
            .get_package(api::GetPackageRequest {
                name: "no-such-package".into(),
            })
            .await
            .unwrap_err();
        // opm returns a plain Go error: grpc-go's Unknown.
        assert_eq!(e.code(), tonic::Code::Unknown);
        assert_eq!(e.message(), "package \"no-such-package\" not found");
    });
}

#[test]
fn sigterm_drains_and_exits_zero_and_a_bad_catalog_is_refused() {
    let mut server = start(&common::fixture_catalog());
    rt().block_on(async {
        connect(server.port).await;
    });
    // SAFETY: signalling our own child.
    unsafe { libc::kill(server.child.id() as i32, libc::SIGTERM) };
    let status = server.child.wait().unwrap();
    assert_eq!(status.code(), Some(0));

    let dir = common::write_tree(&[(
        "p/catalog.yaml",
        "---\nschema: olm.package\nname: p\ndefaultChannel: missing\n",
    )]);
    let o = Command::new(common::olmctl_bin())
        .args(["catalog", "serve"])
        .arg(dir.path())
        .args(["--port", &free_port().to_string()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("does not validate"), "{err}");
}

/// ListBundles: one record per (package, channel, bundle), ordered by channel, package, bundle;
/// edges of that channel kept; version, image, provided APIs and skipRange from the fixture;
/// csvJson and objects cleared for bundles with an image. GetBundle trims the edges.
#[test]
fn bundles_and_edges_as_opm_serves_them() {
    let docs = blobs();
    let mut bundles: BTreeMap<(String, String), &Value> = BTreeMap::new();
    for d in &docs {
        if d["schema"] == "olm.bundle" {
            bundles.insert(
                (
                    d["package"].as_str().unwrap().into(),
                    d["name"].as_str().unwrap().into(),
                ),
                d,
            );
        }
    }
    // (channel, package, bundle) -> the entry.
    let mut want: BTreeMap<(String, String, String), Value> = BTreeMap::new();
    for d in docs.iter().filter(|d| d["schema"] == "olm.channel") {
        for e in d["entries"].as_array().unwrap() {
            want.insert(
                (
                    d["name"].as_str().unwrap().into(),
                    d["package"].as_str().unwrap().into(),
                    e["name"].as_str().unwrap().into(),
                ),
                e.clone(),
            );
        }
    }
    let server = start(&common::fixture_catalog());
    rt().block_on(async {
        let mut c = RegistryClient::new(connect(server.port).await);
        let mut got = Vec::new();
        let mut s = c
            .list_bundles(api::ListBundlesRequest {})
            .await
            .unwrap()
            .into_inner();
        while let Some(b) = s.message().await.unwrap() {
            got.push(b);
        }
        let keys: Vec<(String, String, String)> = got
            .iter()
            .map(|b| {
                (
                    b.channel_name.clone(),
                    b.package_name.clone(),
                    b.csv_name.clone(),
                )
            })
            .collect();
        assert_eq!(keys, want.keys().cloned().collect::<Vec<_>>());
        for b in &got {
            let e = &want[&(
                b.channel_name.clone(),
                b.package_name.clone(),
                b.csv_name.clone(),
            )];
            let blob = bundles[&(b.package_name.clone(), b.csv_name.clone())];
            assert_eq!(
                b.replaces,
                e["replaces"].as_str().unwrap_or(""),
                "{}",
                b.csv_name
            );
            let skips: Vec<&str> = e["skips"]
                .as_array()
                .map(|a| a.iter().map(|s| s.as_str().unwrap()).collect())
                .unwrap_or_default();
            assert_eq!(b.skips, skips);
            assert_eq!(b.skip_range, e["skipRange"].as_str().unwrap_or(""));
            assert_eq!(b.bundle_path, blob["image"].as_str().unwrap_or(""));
            let props = blob["properties"].as_array().unwrap();
            let version = props
                .iter()
                .find(|p| p["type"] == "olm.package")
                .map(|p| p["value"]["version"].as_str().unwrap())
                .unwrap();
            assert_eq!(b.version, version);
            let gvks: Vec<(String, String, String)> = props
                .iter()
                .filter(|p| p["type"] == "olm.gvk")
                .map(|p| {
                    let v = &p["value"];
                    (
                        v["group"].as_str().unwrap().into(),
                        v["version"].as_str().unwrap().into(),
                        v["kind"].as_str().unwrap().into(),
                    )
                })
                .collect();
            let served: Vec<(String, String, String)> = b
                .provided_apis
                .iter()
                .map(|g| (g.group.clone(), g.version.clone(), g.kind.clone()))
                .collect();
            assert_eq!(served, gvks);
            // Properties: every one but olm.bundle.object and olm.csv.metadata, in order.
            let types: Vec<&str> = props
                .iter()
                .map(|p| p["type"].as_str().unwrap())
                .filter(|t| *t != "olm.bundle.object" && *t != "olm.csv.metadata")
                .collect();
            assert_eq!(
                b.properties
                    .iter()
                    .map(|p| p.r#type.as_str())
                    .collect::<Vec<_>>(),
                types
            );
            if !b.bundle_path.is_empty() {
                assert!(b.csv_json.is_empty() && b.object.is_empty());
            }
        }
        // GetBundle: the same record with its edges trimmed.
        let b = got
            .iter()
            .find(|b| !b.replaces.is_empty())
            .expect("a bundle with replaces");
        let one = c
            .get_bundle(api::GetBundleRequest {
                pkg_name: b.package_name.clone(),
                channel_name: b.channel_name.clone(),
                csv_name: b.csv_name.clone(),
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(one.replaces, "");
        assert!(one.skips.is_empty());
        assert_eq!(one.version, b.version);
        // GetChannelEntriesThatReplace: every entry naming it in replaces (or skips).
        let mut s = c
            .get_channel_entries_that_replace(api::GetAllReplacementsRequest {
                csv_name: b.replaces.clone(),
            })
            .await
            .unwrap()
            .into_inner();
        let mut entries = Vec::new();
        while let Some(e) = s.message().await.unwrap() {
            entries.push((e.package_name, e.channel_name, e.bundle_name));
        }
        let mut expect: Vec<(String, String, String)> = want
            .iter()
            .filter(|(_, e)| {
                e["replaces"] == b.replaces.as_str()
                    || e["skips"]
                        .as_array()
                        .is_some_and(|a| a.iter().any(|s| s == b.replaces.as_str()))
            })
            .map(|((ch, p, n), _)| (p.clone(), ch.clone(), n.clone()))
            .collect();
        expect.sort();
        assert_eq!(entries, expect);
        // Errors: opm's messages, as Unknown.
        let e = c
            .get_bundle(api::GetBundleRequest {
                pkg_name: b.package_name.clone(),
                channel_name: "no-such-channel".into(),
                csv_name: b.csv_name.clone(),
            })
            .await
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::Unknown);
        assert_eq!(
            e.message(),
            format!(
                "package {:?}, channel \"no-such-channel\" not found",
                b.package_name
            )
        );
        let e = c
            .get_channel_entries_that_replace(api::GetAllReplacementsRequest {
                csv_name: "nothing.v0".into(),
            })
            .await
            .unwrap_err();
        assert_eq!(
            e.message(),
            "no channel entries found that replace nothing.v0"
        );
    });
}

/// ExperimentalListPackageCustomSchemas: custom-schema blobs, only for a client sending
/// `x-acknowledge-experimental: true`; opm's InvalidArgument for a missing or malformed schema.
#[test]
fn custom_schemas_for_clients_that_acknowledge_the_experiment() {
    use olmctl::serve::api::experimental_registry_client::ExperimentalRegistryClient;
    let dir = common::write_tree(&[(
        "p/catalog.yaml",
        "---\nschema: olm.package\nname: p\ndefaultChannel: stable\n---\nschema: olm.channel\npackage: p\nname: stable\nentries:\n- name: p.v1.0.0\n---\nschema: olm.bundle\npackage: p\nname: p.v1.0.0\nimage: quay.io/p/bundle:v1.0.0\nproperties:\n- type: olm.package\n  value: {packageName: p, version: 1.0.0}\n---\nschema: acme.notes\npackage: p\nname: n1\ntext: hello\nlevel: 2\n---\nschema: acme.notes\npackage: p\nname: n1\ntext: hello\nlevel: 2\n---\nschema: acme.notes\nname: global\ntext: all\n",
    )]);
    let server = start(dir.path());
    rt().block_on(async {
        let mut c = ExperimentalRegistryClient::new(connect(server.port).await);
        let ask = |schema: &str, pkg: &str, ack: bool| {
            let mut r = tonic::Request::new(api::ExperimentalListPackageCustomSchemasRequest {
                schema: schema.into(),
                package_name: pkg.into(),
            });
            if ack {
                r.metadata_mut()
                    .insert("x-acknowledge-experimental", "true".parse().unwrap());
            }
            r
        };
        let all = |s: tonic::Streaming<prost_types::Struct>| async move {
            let mut s = s;
            let mut v = Vec::new();
            while let Some(x) = s.message().await.unwrap() {
                v.push(x);
            }
            v
        };
        // Not acknowledged: empty, even for a bad request.
        let got = all(c
            .experimental_list_package_custom_schemas(ask("", "", false))
            .await
            .unwrap()
            .into_inner())
        .await;
        assert!(got.is_empty());
        // The package's blobs (identical ones once), each as a Struct.
        let got = all(c
            .experimental_list_package_custom_schemas(ask("acme.notes", "p", true))
            .await
            .unwrap()
            .into_inner())
        .await;
        assert_eq!(got.len(), 1);
        let f = &got[0].fields;
        assert_eq!(
            f["text"].kind,
            Some(prost_types::value::Kind::StringValue("hello".into()))
        );
        assert_eq!(
            f["level"].kind,
            Some(prost_types::value::Kind::NumberValue(2.0))
        );
        // No package: the blobs without one.
        let got = all(c
            .experimental_list_package_custom_schemas(ask("acme.notes", "", true))
            .await
            .unwrap()
            .into_inner())
        .await;
        assert_eq!(got.len(), 1);
        assert_eq!(
            got[0].fields["name"].kind,
            Some(prost_types::value::Kind::StringValue("global".into()))
        );
        for (schema, pkg, msg) in [
            ("", "p", "schema is required"),
            (
                "acme/notes",
                "",
                "invalid schema \"acme/notes\": must match ^[a-zA-Z0-9][a-zA-Z0-9._-]*$",
            ),
        ] {
            let e = c
                .experimental_list_package_custom_schemas(ask(schema, pkg, true))
                .await
                .unwrap_err();
            assert_eq!(e.code(), tonic::Code::InvalidArgument);
            assert_eq!(e.message(), msg);
        }
    });
}

/// Bytes that are not the request message: InvalidArgument, and the server keeps serving.
#[test]
fn a_malformed_request_is_invalid_argument() {
    use bytes::{Buf, BufMut};
    use tonic::codec::{DecodeBuf, Decoder, EncodeBuf, Encoder};

    #[derive(Clone, Copy, Default)]
    struct Raw;
    struct RawEnc;
    struct RawDec;
    impl Encoder for RawEnc {
        type Item = Vec<u8>;
        type Error = tonic::Status;
        fn encode(&mut self, item: Vec<u8>, buf: &mut EncodeBuf<'_>) -> Result<(), tonic::Status> {
            buf.put_slice(&item);
            Ok(())
        }
    }
    impl Decoder for RawDec {
        type Item = Vec<u8>;
        type Error = tonic::Status;
        fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<Vec<u8>>, tonic::Status> {
            Ok(Some(buf.copy_to_bytes(buf.remaining()).to_vec()))
        }
    }
    impl tonic::codec::Codec for Raw {
        type Encode = Vec<u8>;
        type Decode = Vec<u8>;
        type Encoder = RawEnc;
        type Decoder = RawDec;
        fn encoder(&mut self) -> RawEnc {
            RawEnc
        }
        fn decoder(&mut self) -> RawDec {
            RawDec
        }
    }

    let server = start(&common::fixture_catalog());
    rt().block_on(async {
        let ch = connect(server.port).await;
        for rpc in ["GetPackage", "GetBundle", "GetDefaultBundleThatProvides"] {
            let mut grpc = tonic::client::Grpc::new(ch.clone());
            grpc.ready().await.unwrap();
            let path =
                tonic::codegen::http::uri::PathAndQuery::try_from(format!("/api.Registry/{rpc}"))
                    .unwrap();
            // Field 1 as a varint where a string is expected, then a truncated length.
            let e = grpc
                .unary(
                    tonic::Request::new(vec![0x08, 0x96, 0x01, 0x0a, 0xff]),
                    path,
                    Raw,
                )
                .await
                .unwrap_err();
            assert_eq!(e.code(), tonic::Code::InvalidArgument, "{rpc}: {e:?}");
            assert!(
                e.message().starts_with("malformed request: "),
                "{}",
                e.message()
            );
        }
        // Still serving.
        let mut c = RegistryClient::new(ch);
        assert!(c.list_packages(api::ListPackageRequest {}).await.is_ok());
    });
}
