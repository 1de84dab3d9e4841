//! OLM v1 test support: pelorus-operator of the fixtures (a replaces chain 0.0.1 .. 0.0.9 in
//! channel `alpha`, without its OLM v0 package dependencies) rendered into a catalog with every manifest as `olm.bundle.object` (as
//! `opm render` and `olmctl catalog template` write it), the catalogd double serving it as an
//! image, and catalogd's HTTP API for it served in-process by the library
//! (`olmctl::serve::http`, what `olmctl catalog serve --http` runs).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use olmctl_testkit::api::ApiServer;
use olmctl_testkit::olmv1::{CatalogImage, OlmV1, Rendered};
use serde_json::{Value, json};

pub const PACKAGE: &str = "pelorus-operator";
/// The ClusterCatalog's name.
pub const CATALOG: &str = "pelorus-catalog";

/// The fixture bundle directory of version `0.0.i`.
pub fn bundle_dir(i: u32) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/fixtures/operators/pelorus-operator")
        .join(format!("0.0.{i}"))
}

pub fn bundle_name(i: u32) -> String {
    format!("{PACKAGE}.v0.0.{i}")
}

/// The fixture bundle `0.0.i` copied under `root` as OLM v1 can install it: without
/// `metadata/properties.yaml` (its `olm.package` dependencies on prometheus and
/// grafana-operator are what OLM v1 refuses: "has a dependency declared via property
/// \"olm.package.required\" which is currently not supported") and with the AllNamespaces
/// install mode supported (v1 requires it: "bundle does not support AllNamespaces install
/// mode"); the CRDs, which the gate and the preflight compare, are the fixture's.
pub fn v1_bundle(root: &Path, i: u32) -> PathBuf {
    let to = root.join(format!("bundles/0.0.{i}"));
    for sub in ["manifests", "metadata"] {
        std::fs::create_dir_all(to.join(sub)).expect("mkdir");
        for e in std::fs::read_dir(bundle_dir(i).join(sub))
            .expect("read")
            .flatten()
        {
            if e.file_name() == "properties.yaml" {
                continue;
            }
            let mut text = std::fs::read_to_string(e.path()).expect("read");
            if text.contains("kind: ClusterServiceVersion") {
                let all = "  - supported: false\n    type: AllNamespaces\n";
                assert!(text.contains(all), "{}", e.path().display());
                text = text.replace(all, "  - supported: true\n    type: AllNamespaces\n");
            }
            std::fs::write(to.join(sub).join(e.file_name()), text).expect("write");
        }
    }
    to
}

/// Writes the FBC of versions `first..=last` (each replacing the one before) into `dir`.
/// The bundles are rendered for install namespace `ns`.
pub fn render_catalog(dir: &Path, first: u32, last: u32, ns: &str) -> CatalogImage {
    std::fs::create_dir_all(dir).expect("mkdir");
    let mut blobs = vec![
        json!({"schema": "olm.package", "name": PACKAGE, "defaultChannel": "alpha"}),
        json!({"schema": "olm.channel", "package": PACKAGE, "name": "alpha",
               "entries": (first..=last).map(|i| {
                   let mut e = json!({"name": bundle_name(i)});
                   if i > first {
                       e["replaces"] = json!(bundle_name(i - 1));
                   }
                   e
               }).collect::<Vec<_>>()}),
    ];
    let mut bundles = BTreeMap::new();
    for i in first..=last {
        let image = format!("quay.io/pelorus/pelorus-operator-bundle:0.0.{i}");
        // Beside the catalog directory, not in it (catalogd reads every file there).
        let b = v1_bundle(dir.parent().expect("a parent"), i);
        let r = olmctl::bundle::render::render_dir(
            &b,
            &image,
            olmctl::bundle::render::ObjectMode::BundleObjects,
        )
        .expect("render the bundle");
        blobs.push(serde_json::from_str(&r.blob.to_json()).expect("json"));
        // What the double applies: the gate tests need objects for these edited bundles, of
        // which upstream has no recording, so the library renders them here (test set-up; the
        // renderer itself is checked against upstream's recordings in
        // cli/tests/olmv1_conformance.rs).
        let loaded = olmctl::bundle::load::load_bundle(&b).expect("load the bundle");
        let opts = olmctl::olmv1::render::Options {
            install_namespace: ns.into(),
            watch_namespace: None,
            cert_provider: olmctl::olmv1::render::CertProvider::CertManager,
            operator_namespace_annotation: true,
            single_own_namespace: false,
            deployment_config: None,
        };
        let objects = olmctl::olmv1::render::for_install(&loaded, &opts).expect("render");
        bundles.insert(
            bundle_name(i),
            Rendered::Objects {
                namespace: ns.into(),
                objects,
            },
        );
    }
    let text: Vec<String> = blobs.iter().map(Value::to_string).collect();
    std::fs::write(dir.join("catalog.json"), text.join("\n") + "\n").expect("write");
    CatalogImage {
        dir: dir.to_path_buf(),
        bundles,
        digest: None,
    }
}

/// catalogd's HTTP API for the catalog at `dir`, named [`CATALOG`], on 127.0.0.1; returns
/// `http://127.0.0.1:PORT` (what the catalogd double's external address is set to) and the
/// server task.
pub async fn serve_http(dir: &Path, scratch: &Path) -> (String, tokio::task::JoinHandle<()>) {
    let stored = olmctl::serve::http::store::store(dir, scratch).expect("store the catalog");
    let catalog = Arc::new(olmctl::serve::http::handlers::Catalog {
        name: CATALOG.into(),
        stored,
    });
    let l = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = l.local_addr().expect("addr");
    let task = tokio::spawn(async move {
        let _ = olmctl::serve::http::server::serve(
            catalog,
            l,
            Default::default(),
            std::future::pending::<()>(),
        )
        .await;
    });
    (format!("http://{addr}"), task)
}

/// catalogd's HTTP API for several catalogs at one address, as catalogd serves every
/// ClusterCatalog under `<external address>/catalogs/<name>/`: each request goes to the
/// catalog its path names (the library's `respond`, what `catalog serve --http` answers).
pub async fn serve_http_many(
    catalogs: &[(&str, &Path)],
    scratch: &Path,
) -> (String, tokio::task::JoinHandle<()>) {
    use hyper_util::rt::TokioIo;
    use olmctl::serve::http::handlers::Catalog;
    let served: Arc<Vec<Catalog>> = Arc::new(
        catalogs
            .iter()
            .map(|(name, dir)| Catalog {
                name: name.to_string(),
                stored: olmctl::serve::http::store::store(dir, scratch).expect("store"),
            })
            .collect(),
    );
    let l = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = l.local_addr().expect("addr");
    let task = tokio::spawn(async move {
        while let Ok((stream, _)) = l.accept().await {
            let served = served.clone();
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(move |req| {
                    let served = served.clone();
                    async move {
                        let named = req.uri().path().split('/').nth(2).unwrap_or_default();
                        // An unknown name is answered by the first catalog: its 404.
                        let c = served
                            .iter()
                            .find(|c| c.name == named)
                            .unwrap_or(&served[0]);
                        Ok::<_, std::convert::Infallible>(olmctl::serve::http::server::respond(
                            c, &req,
                        ))
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    (format!("http://{addr}"), task)
}

/// Serves versions `first..=last` as catalog image `image` (catalogd double) and over HTTP,
/// and points the ClusterCatalog at it (a new image reference resolves to a new digest, as a
/// catalog poll finds new content); returns the HTTP server's task.
pub async fn publish(
    api: &ApiServer,
    olm: &OlmV1,
    root: &Path,
    tag: &str,
    first: u32,
    last: u32,
    ns: &str,
) -> tokio::task::JoinHandle<()> {
    let dir = root.join(format!("catalog-{tag}"));
    let content = render_catalog(&dir, first, last, ns);
    let image = format!("quay.io/pelorus/catalog:{tag}");
    olm.serve(&image, content);
    let scratch = root.join("scratch");
    std::fs::create_dir_all(&scratch).expect("mkdir");
    let (base, task) = serve_http(&dir, &scratch).await;
    olm.set_external_address(&base);
    let cc = json!({
        "apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterCatalog",
        "metadata": {"name": CATALOG},
        "spec": {"source": {"type": "Image", "image": {"ref": image}}},
    });
    match api.get(olmctl_testkit::olmv1::GROUP, "clustercatalogs", "", CATALOG) {
        None => {
            api.insert("clustercatalogs", cc);
        }
        Some(_) => {
            api.merge(
                olmctl_testkit::olmv1::GROUP,
                "clustercatalogs",
                "",
                CATALOG,
                &json!({"spec": cc["spec"]}),
                false,
            );
        }
    }
    olm.tick();
    task
}

/// The ClusterExtension `pelorus` (label `app: pelorus`) installing `version` of the package
/// into namespace `pelorus`.
pub fn extension(version: &str) -> Value {
    json!({
        "apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterExtension",
        "metadata": {"name": "pelorus", "labels": {"app": "pelorus"}},
        "spec": {
            "namespace": "pelorus",
            "serviceAccount": {"name": "pelorus-installer"},
            "source": {"sourceType": "Catalog",
                       "catalog": {"packageName": PACKAGE, "version": version, "channels": ["alpha"]}},
        },
    })
}

/// The ClusterExtension as the API has it.
pub fn get_extension(api: &ApiServer) -> Value {
    api.get(
        olmctl_testkit::olmv1::GROUP,
        "clusterextensions",
        "",
        "pelorus",
    )
    .expect("the ClusterExtension")
}

/// The installed bundle's name (`status.install.bundle.name`).
pub fn installed(api: &ApiServer) -> String {
    get_extension(api)["status"]["install"]["bundle"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The pin (`spec.source.catalog.version`).
pub fn pin(api: &ApiServer) -> String {
    get_extension(api)["spec"]["source"]["catalog"]["version"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}
