//! `olmctl catalog serve` on the v4.18 fixture, called with a real gRPC client (tonic) on
//! 127.0.0.1: health and every RPC of api.Registry and api.ExperimentalRegistry, with the expected values worked
//! out from the fixture data here, independently of the server code.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;
use std::time::{Duration, Instant};

use common::served::Server;
use olmctl::serve::api;
use olmctl::serve::api::registry_client::RegistryClient;
use serde_json::Value;
use tonic_health::pb::health_client::HealthClient;

fn start(dir: &std::path::Path) -> Server {
    common::served::spawn(dir, None, &[])
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

/// What the fixture says: package -> (default channel, channel -> head), read straight from the
/// JSON/YAML blobs with the head rule (the entry no other entry replaces or skips).
fn expected() -> BTreeMap<String, (String, BTreeMap<String, String>)> {
    let mut out: BTreeMap<String, (String, BTreeMap<String, String>)> = BTreeMap::new();
    let docs = common::fixture_blobs();
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
        .args(["--port", &common::free_port().to_string()])
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
    let docs = common::fixture_blobs();
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

/// The CSV opm builds from a bundle's `olm.csv.metadata` (model_to_api.go), worked out from the
/// fixture blobs: the fixture's metadata was rendered by opm from real CSVs, so its values are
/// already in their Go types' shape.
fn expected_csv(bundle: &Value, pkg: &Value) -> Value {
    let props = bundle["properties"].as_array().unwrap();
    let meta = &props
        .iter()
        .find(|p| p["type"] == "olm.csv.metadata")
        .unwrap()["value"];
    let version =
        props.iter().find(|p| p["type"] == "olm.package").unwrap()["value"]["version"].clone();
    let mut metadata = serde_json::json!({"name": bundle["name"]});
    for k in ["labels", "annotations"] {
        if meta
            .get(k)
            .is_some_and(|v| v.as_object().is_some_and(|o| !o.is_empty()))
        {
            metadata[k] = meta[k].clone();
        }
    }
    let mut spec = serde_json::json!({
        "install": {"strategy": "deployment", "spec": {"deployments": null}},
        "version": version,
        "customresourcedefinitions": meta.get("crdDescriptions").cloned().unwrap_or(serde_json::json!({})),
        "apiservicedefinitions": meta.get("apiServiceDefinitions").cloned().unwrap_or(serde_json::json!({})),
        "displayName": meta.get("displayName").cloned().unwrap_or(serde_json::json!("")),
        "provider": meta.get("provider").cloned().unwrap_or(serde_json::json!({})),
        "cleanup": {"enabled": false},
    });
    for k in [
        "maturity",
        "nativeAPIs",
        "minKubeVersion",
        "keywords",
        "maintainers",
        "links",
        "installModes",
    ] {
        if let Some(v) = meta.get(k) {
            spec[k] = v.clone();
        }
    }
    let description = meta["description"]
        .as_str()
        .filter(|d| !d.is_empty())
        .or(pkg["description"].as_str())
        .unwrap_or("");
    if !description.is_empty() {
        spec["description"] = description.into();
    }
    if let Some(icon) = pkg.get("icon") {
        spec["icon"] =
            serde_json::json!([{"base64data": icon["base64data"], "mediatype": icon["mediatype"]}]);
    }
    if let Some(ri) = bundle["relatedImages"].as_array().filter(|a| !a.is_empty()) {
        spec["relatedImages"] = ri
            .iter()
            .map(|r| serde_json::json!({"name": r["name"].as_str().unwrap_or(""), "image": r["image"]}))
            .collect();
    }
    serde_json::json!({
        "kind": "ClusterServiceVersion",
        "apiVersion": "operators.coreos.com/v1alpha1",
        "metadata": metadata,
        "spec": spec,
        "status": {"cleanup": {}},
    })
}

/// Every bundle through GetBundle, every channel through GetBundleForChannel, every edge
/// through GetBundleThatReplaces, and every GVK of the fixture through the three "provide"
/// RPCs, against what the fixture blobs say opm answers.
#[test]
fn every_bundle_and_every_provider_as_opm_serves_them() {
    let docs = common::fixture_blobs();
    let pkgs: BTreeMap<&str, &Value> = docs
        .iter()
        .filter(|d| d["schema"] == "olm.package")
        .map(|d| (d["name"].as_str().unwrap(), d))
        .collect();
    let bundles: BTreeMap<(&str, &str), &Value> = docs
        .iter()
        .filter(|d| d["schema"] == "olm.bundle")
        .map(|d| {
            (
                (d["package"].as_str().unwrap(), d["name"].as_str().unwrap()),
                d,
            )
        })
        .collect();
    // (package, channel) -> entries in file order.
    let channels: BTreeMap<(&str, &str), &Vec<Value>> = docs
        .iter()
        .filter(|d| d["schema"] == "olm.channel")
        .map(|d| {
            (
                (d["package"].as_str().unwrap(), d["name"].as_str().unwrap()),
                d["entries"].as_array().unwrap(),
            )
        })
        .collect();
    let heads = expected();
    let str_list = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| a.iter().map(|s| s.as_str().unwrap().to_string()).collect())
            .unwrap_or_default()
    };
    let server = start(&common::fixture_catalog());
    rt().block_on(async {
        let mut c = RegistryClient::new(connect(server.port).await);
        let mut checked = 0;
        for (&(pn, cn), entries) in &channels {
            for e in entries.iter() {
                let name = e["name"].as_str().unwrap();
                let blob = bundles[&(pn, name)];
                let b = c
                    .get_bundle(api::GetBundleRequest {
                        pkg_name: pn.into(),
                        channel_name: cn.into(),
                        csv_name: name.into(),
                    })
                    .await
                    .unwrap()
                    .into_inner();
                assert_eq!((b.csv_name.as_str(), b.package_name.as_str()), (name, pn));
                assert_eq!(b.channel_name, cn);
                assert_eq!(b.bundle_path, blob["image"].as_str().unwrap());
                assert_eq!(b.skip_range, e["skipRange"].as_str().unwrap_or(""), "{name}");
                assert!(b.replaces.is_empty() && b.skips.is_empty(), "{name}: edges trimmed");
                let props = blob["properties"].as_array().unwrap();
                let gvk = |t: &str| -> Vec<(String, String, String)> {
                    props
                        .iter()
                        .filter(|p| p["type"] == t)
                        .map(|p| {
                            let v = &p["value"];
                            let s = |k: &str| v[k].as_str().unwrap().to_string();
                            (s("group"), s("version"), s("kind"))
                        })
                        .collect()
                };
                let served = |l: &[api::GroupVersionKind]| -> Vec<(String, String, String)> {
                    l.iter()
                        .map(|g| {
                            assert!(g.plural.is_empty());
                            (g.group.clone(), g.version.clone(), g.kind.clone())
                        })
                        .collect()
                };
                assert_eq!(served(&b.provided_apis), gvk("olm.gvk"), "{name}");
                assert_eq!(served(&b.required_apis), gvk("olm.gvk.required"), "{name}");
                // Properties: compact JSON with sorted keys (serde_json's map is sorted).
                let want_props: Vec<(String, String)> = props
                    .iter()
                    .filter(|p| p["type"] != "olm.bundle.object" && p["type"] != "olm.csv.metadata")
                    .map(|p| {
                        (
                            p["type"].as_str().unwrap().to_string(),
                            serde_json::to_string(&p["value"]).unwrap(),
                        )
                    })
                    .collect();
                let got_props: Vec<(String, String)> = b
                    .properties
                    .iter()
                    .map(|p| (p.r#type.clone(), p.value.clone()))
                    .collect();
                assert_eq!(got_props, want_props, "{name}");
                let want_deps: Vec<(String, String)> = props
                    .iter()
                    .filter_map(|p| match p["type"].as_str().unwrap() {
                        "olm.gvk.required" => {
                            Some(("olm.gvk".into(), serde_json::to_string(&p["value"]).unwrap()))
                        }
                        "olm.package.required" => Some((
                            "olm.package".into(),
                            format!(
                                "{{\"packageName\":{},\"version\":{}}}",
                                p["value"]["packageName"], p["value"]["versionRange"]
                            ),
                        )),
                        _ => None,
                    })
                    .collect();
                let got_deps: Vec<(String, String)> = b
                    .dependencies
                    .iter()
                    .map(|d| (d.r#type.clone(), d.value.clone()))
                    .collect();
                assert_eq!(got_deps, want_deps, "{name}");
                // The fixture carries olm.csv.metadata and no manifests: the synthesized CSV,
                // HTML-escaped as Go's json.Marshal writes it, is the csvJson and the only object.
                assert!(props.iter().all(|p| p["type"] != "olm.bundle.object"));
                let csv: Value = serde_json::from_str(&b.csv_json).unwrap();
                assert_eq!(csv, expected_csv(blob, pkgs[pn]), "{name}");
                assert!(!b.csv_json.contains(['<', '>', '&']), "{name}");
                assert_eq!(b.object, vec![b.csv_json.clone()]);
                checked += 1;
            }
            // GetBundleForChannel (deprecated in the proto, still served): the head.
            #[allow(deprecated)]
            let head = c
                .get_bundle_for_channel(api::GetBundleInChannelRequest {
                    pkg_name: pn.into(),
                    channel_name: cn.into(),
                })
                .await
                .unwrap()
                .into_inner();
            assert_eq!(head.csv_name, heads[pn].1[cn], "{pn}/{cn}");
            // GetBundleThatReplaces, for every name an entry replaces or skips: the first
            // (by bundle name) of the entries naming it.
            let mut replacing: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
            for e in entries.iter() {
                let n = e["name"].as_str().unwrap();
                for r in e["replaces"].as_str().into_iter().map(String::from).chain(str_list(&e["skips"])) {
                    replacing.entry(r).or_default().insert(n);
                }
            }
            for (old, newer) in &replacing {
                let b = c
                    .get_bundle_that_replaces(api::GetReplacementRequest {
                        csv_name: old.clone(),
                        pkg_name: pn.into(),
                        channel_name: cn.into(),
                    })
                    .await
                    .unwrap()
                    .into_inner();
                assert_eq!(&b.csv_name.as_str(), newer.first().unwrap(), "{pn}/{cn} {old}");
            }
        }
        assert_eq!(checked, bundles.len().max(checked));
        assert!(checked >= bundles.len(), "{checked} of {}", bundles.len());

        // GetChannelEntriesThatReplace, for every name an entry replaces or skips: each
        // entry naming it (by package, channel, bundle), carrying the entry's own replaces;
        // an entry that both replaces and skips it once.
        let mut names: BTreeSet<String> = BTreeSet::new();
        for entries in channels.values() {
            for e in entries.iter() {
                names.extend(e["replaces"].as_str().map(String::from));
                names.extend(str_list(&e["skips"]));
            }
        }
        names.remove("");
        for old in &names {
            let mut want = Vec::new();
            for (&(pn, cn), entries) in &channels {
                let mut sorted: Vec<&Value> = entries.iter().collect();
                sorted.sort_by_key(|e| e["name"].as_str().unwrap());
                for e in sorted {
                    let replaces = e["replaces"].as_str().unwrap_or("");
                    let row = (pn.to_string(), cn.to_string(), e["name"].as_str().unwrap().to_string(), replaces.to_string());
                    if replaces == old {
                        want.push(row.clone());
                    }
                    for s in str_list(&e["skips"]) {
                        if &s == old && s != replaces {
                            want.push(row.clone());
                        }
                    }
                }
            }
            let mut s = c
                .get_channel_entries_that_replace(api::GetAllReplacementsRequest { csv_name: old.clone() })
                .await
                .unwrap()
                .into_inner();
            let mut got = Vec::new();
            while let Some(e) = s.message().await.unwrap() {
                got.push((e.package_name, e.channel_name, e.bundle_name, e.replaces));
            }
            assert_eq!(got, want, "{old}");
        }
        assert!(names.len() > 100, "{}", names.len());

        // The provide RPCs, for every GVK some bundle provides.
        let mut gvks: BTreeSet<(String, String, String)> = BTreeSet::new();
        for b in bundles.values() {
            for p in b["properties"].as_array().unwrap() {
                if p["type"] == "olm.gvk" {
                    let v = &p["value"];
                    let s = |k: &str| v[k].as_str().unwrap().to_string();
                    gvks.insert((s("group"), s("version"), s("kind")));
                }
            }
        }
        assert!(gvks.len() > 20, "{}", gvks.len());
        let provides = |pn: &str, n: &str, g: &(String, String, String)| {
            bundles[&(pn, n)]["properties"].as_array().unwrap().iter().any(|p| {
                p["type"] == "olm.gvk"
                    && p["value"]["group"] == g.0.as_str()
                    && p["value"]["version"] == g.1.as_str()
                    && p["value"]["kind"] == g.2.as_str()
            })
        };
        for g in &gvks {
            // Every bundle providing it (package, channel, bundle order): itself with its
            // replaces, then one entry per skipped name other than replaces.
            let mut all = Vec::new();
            let mut latest = Vec::new();
            for (&(pn, cn), entries) in &channels {
                let names: BTreeSet<&str> = entries.iter().map(|e| e["name"].as_str().unwrap()).collect();
                let mut sorted: Vec<&Value> = entries.iter().collect();
                sorted.sort_by_key(|e| e["name"].as_str().unwrap());
                for e in sorted {
                    let n = e["name"].as_str().unwrap();
                    if !provides(pn, n, g) {
                        continue;
                    }
                    let replaces = e["replaces"].as_str().unwrap_or("").to_string();
                    let is_head = heads[pn].1[cn] == n;
                    let push = |out: &mut Vec<(String, String, String, String)>, only_in_channel: bool| {
                        out.push((pn.into(), cn.into(), n.into(), replaces.clone()));
                        for s in str_list(&e["skips"]) {
                            if s != replaces && (!only_in_channel || names.contains(s.as_str())) {
                                out.push((pn.into(), cn.into(), n.into(), s));
                            }
                        }
                    };
                    push(&mut all, false);
                    if is_head {
                        push(&mut latest, true);
                    }
                }
            }
            let req = api::GetAllProvidersRequest {
                group: g.0.clone(),
                version: g.1.clone(),
                kind: g.2.clone(),
                plural: String::new(),
            };
            let mut s = c.get_channel_entries_that_provide(req).await.unwrap().into_inner();
            let mut got = Vec::new();
            while let Some(e) = s.message().await.unwrap() {
                got.push((e.package_name, e.channel_name, e.bundle_name, e.replaces));
            }
            assert_eq!(got, all, "{g:?}");
            let req = api::GetLatestProvidersRequest {
                group: g.0.clone(),
                version: g.1.clone(),
                kind: g.2.clone(),
                plural: String::new(),
            };
            let answer = c.get_latest_channel_entries_that_provide(req).await;
            let mut got = Vec::new();
            match answer {
                Ok(s) => {
                    let mut s = s.into_inner();
                    while let Some(e) = s.message().await.unwrap() {
                        got.push((e.package_name, e.channel_name, e.bundle_name, e.replaces));
                    }
                }
                Err(e) => {
                    assert_eq!(e.code(), tonic::Code::Unknown);
                    assert_eq!(
                        e.message(),
                        format!("no channel entries found that provide group:{:?} version:{:?} kind:{:?}", g.0, g.1, g.2)
                    );
                }
            }
            assert_eq!(got, latest, "{g:?}");
            // GetDefaultBundleThatProvides: the default channel's head of the first package
            // (by name) whose default channel head provides it.
            let want = latest
                .iter()
                .find(|(pn, cn, _, _)| pkgs[pn.as_str()]["defaultChannel"] == cn.as_str())
                .map(|(pn, _, n, _)| (pn.clone(), n.clone()));
            let req = api::GetDefaultProviderRequest {
                group: g.0.clone(),
                version: g.1.clone(),
                kind: g.2.clone(),
                plural: String::new(),
            };
            match (c.get_default_bundle_that_provides(req).await, want) {
                (Ok(b), Some((pn, n))) => {
                    let b = b.into_inner();
                    assert_eq!((b.package_name, b.csv_name), (pn, n), "{g:?}");
                    assert!(b.replaces.is_empty() && b.skips.is_empty());
                }
                (Err(e), None) => assert_eq!(e.code(), tonic::Code::Unknown, "{g:?}"),
                (got, want) => panic!("{g:?}: got {got:?}, want {want:?}"),
            }
        }
    });
}

/// Server reflection (v1 and v1alpha, as grpc-go registers both for opm) lists every service,
/// and resolves the registry's symbols to `registry.proto`.
#[test]
fn reflection_lists_every_service() {
    use tonic_reflection::pb::v1::ServerReflectionRequest;
    use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;
    let server = start(&common::fixture_catalog());
    rt().block_on(async {
        let ch = connect(server.port).await;
        let mut c = ServerReflectionClient::new(ch.clone());
        let ask = |m: MessageRequest| ServerReflectionRequest {
            host: String::new(),
            message_request: Some(m),
        };
        let requests = vec![
            ask(MessageRequest::ListServices(String::new())),
            ask(MessageRequest::FileContainingSymbol("api.Registry".into())),
        ];
        let mut s = c
            .server_reflection_info(futures_util::stream::iter(requests))
            .await
            .unwrap()
            .into_inner();
        let Some(MessageResponse::ListServicesResponse(l)) =
            s.message().await.unwrap().unwrap().message_response
        else {
            panic!("no service list");
        };
        let mut names: Vec<String> = l.service.into_iter().map(|s| s.name).collect();
        names.sort();
        assert_eq!(
            names,
            [
                "api.ExperimentalRegistry",
                "api.Registry",
                "grpc.health.v1.Health",
                "grpc.reflection.v1.ServerReflection"
            ]
        );
        let Some(MessageResponse::FileDescriptorResponse(f)) =
            s.message().await.unwrap().unwrap().message_response
        else {
            panic!("no file descriptor");
        };
        let fd = <prost_types::FileDescriptorProto as prost::Message>::decode(
            f.file_descriptor_proto[0].as_slice(),
        )
        .unwrap();
        assert_eq!(fd.name(), "registry.proto");
        assert!(fd.service.iter().any(|s| s.name() == "Registry"));
        // The v1alpha protocol answers too (older grpcurl and grpc_cli).
        use tonic_reflection::pb::v1alpha::server_reflection_client::ServerReflectionClient as Alpha;
        use tonic_reflection::pb::v1alpha::server_reflection_request::MessageRequest as AlphaReq;
        use tonic_reflection::pb::v1alpha::ServerReflectionRequest as AlphaRequest;
        let mut a = Alpha::new(ch);
        let mut s = a
            .server_reflection_info(futures_util::stream::iter(vec![AlphaRequest {
                host: String::new(),
                message_request: Some(AlphaReq::ListServices(String::new())),
            }]))
            .await
            .unwrap()
            .into_inner();
        assert!(s.message().await.unwrap().is_some());
    });
}

/// Values nest as deep as the loader accepts: a custom-schema blob 5,000 levels deep and a
/// bundle manifest 3,000 deep are indexed and answered without overflowing a stack (the
/// client's prost decoder refuses such depth itself; the server lives on and answers).
#[test]
fn deeply_nested_values_do_not_crash_the_server() {
    use olmctl::serve::api::experimental_registry_client::ExperimentalRegistryClient;
    let deep = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
    let manifest = format!(
        "{{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"data\":{}}}",
        deep(3000)
    );
    let data = olmctl::encoding::base64(manifest.as_bytes());
    let bundle = format!(
        r#"{{"schema":"olm.bundle","package":"p","name":"p.v1.0.0","image":"","properties":[{{"type":"olm.package","value":{{"packageName":"p","version":"1.0.0"}}}},{{"type":"olm.bundle.object","value":{{"data":"{data}"}}}}]}}"#
    );
    let custom = format!(
        r#"{{"schema":"acme.deep","package":"p","v":{}}}"#,
        deep(5000)
    );
    let catalog = [
        r#"{"schema":"olm.package","name":"p","defaultChannel":"stable"}"#,
        r#"{"schema":"olm.channel","package":"p","name":"stable","entries":[{"name":"p.v1.0.0"}]}"#,
        &bundle,
        &custom,
    ]
    .join("\n");
    let dir = common::write_tree(&[("p/catalog.json", &catalog)]);
    let server = start(dir.path());
    rt().block_on(async {
        let ch = connect(server.port).await;
        let mut r = tonic::Request::new(api::ExperimentalListPackageCustomSchemasRequest {
            schema: "acme.deep".into(),
            package_name: "p".into(),
        });
        r.metadata_mut()
            .insert("x-acknowledge-experimental", "true".parse().unwrap());
        let answer = ExperimentalRegistryClient::new(ch.clone())
            .experimental_list_package_custom_schemas(r)
            .await;
        if let Ok(s) = answer {
            let _ = s.into_inner().message().await;
        }
        let b = RegistryClient::new(ch.clone())
            .get_bundle(api::GetBundleRequest {
                pkg_name: "p".into(),
                channel_name: "stable".into(),
                csv_name: "p.v1.0.0".into(),
            })
            .await;
        // The object is served (the client may refuse to decode that depth).
        if let Ok(b) = b {
            assert_eq!(b.into_inner().object.len(), 1);
        }
        // Still serving.
        let mut h = HealthClient::new(ch);
        let s = h
            .check(tonic_health::pb::HealthCheckRequest {
                service: String::new(),
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(
            s.status,
            tonic_health::pb::health_check_response::ServingStatus::Serving as i32
        );
    });
}
