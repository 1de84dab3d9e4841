//! OLM v0's two controllers as doubles: the catalog operator ([`catalog_operator`]:
//! resolution, InstallPlans, their execution) and the OLM operator ([`olm_operator`]: CSV
//! phases, Deployments, webhooks, RBAC), each following the OLM source revision of
//! cluster.md (`992bb097`, v0.46.0-17), over the API double. They run in one loop every
//! 100 ms, as OLM's informers would wake them; each write goes to the API at once, in OLM's
//! order, so a client sees every intermediate state OLM produces.
//!
//! Catalogs are registered by image ([`Olm::serve`]); a CatalogSource whose `spec.image` is
//! one of them is READY. Failures OLM retries can be injected ([`Olm::fail_unpack`],
//! [`Olm::fail_resolution`]).
//!
//! OLM's package-server (the aggregated `packages.operators.coreos.com` API) is
//! [`package_server`].
//!
//! Not modelled: dependencies, copied CSVs in target namespaces, OperatorConditions,
//! admission webhooks and APIServices, plan garbage collection, the registry gRPC pods.

pub mod catalog;
pub mod catalog_operator;
pub mod olm_operator;
pub mod package_server;
pub mod rbac;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use crate::api::ApiServer;
use catalog::Catalog;

/// OLM's API group.
pub const OLM: &str = "operators.coreos.com";

/// Now, as OLM stamps its times.
pub fn now() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// Failures to inject and timings.
#[derive(Debug, Clone)]
struct Knobs {
    unpack_failures: u32,
    resolution_errors: u32,
    retry_timeout: Duration,
}

/// The shared state of the two controllers.
pub struct OlmInner {
    api: ApiServer,
    catalogs: Mutex<Vec<(String, Catalog)>>,
    knobs: Mutex<Knobs>,
    steps: Mutex<Vec<String>>,
    known_csvs: Mutex<BTreeMap<String, Value>>,
    ca: Mutex<Option<(String, String)>>,
}

/// The OLM double; dropping it stops it.
pub struct Olm {
    inner: Arc<OlmInner>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Olm {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Olm {
    /// Starts OLM on the current tokio runtime.
    pub fn start(api: &ApiServer) -> Olm {
        let inner = Arc::new(OlmInner {
            api: api.clone(),
            catalogs: Mutex::new(Vec::new()),
            knobs: Mutex::new(Knobs {
                unpack_failures: 0,
                resolution_errors: 0,
                retry_timeout: Duration::from_secs(60),
            }),
            steps: Mutex::new(Vec::new()),
            known_csvs: Mutex::new(BTreeMap::new()),
            ca: Mutex::new(None),
        });
        let me = inner.clone();
        let task = tokio::spawn(async move {
            loop {
                me.tick().await;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        });
        Olm { inner, task }
    }

    /// CatalogSources with `spec.image == image` serve `catalog`.
    pub fn serve(&self, image: &str, catalog: Catalog) {
        self.inner
            .catalogs
            .lock()
            .expect("catalogs")
            .push((image.to_string(), catalog));
    }

    /// The next `times` unpacks fail (`BundleUnpackFailed`, which OLM retries).
    pub fn fail_unpack(&self, times: u32) {
        self.inner.knobs.lock().expect("knobs").unpack_failures = times;
    }

    /// The next `times` resolutions fail (`ErrorPreventedResolution`, which OLM retries).
    pub fn fail_resolution(&self, times: u32) {
        self.inner.knobs.lock().expect("knobs").resolution_errors = times;
    }

    /// How long a failing plan is retried before it fails (`--install-plan-retry-timeout`).
    pub fn set_retry_timeout(&self, d: Duration) {
        self.inner.knobs.lock().expect("knobs").retry_timeout = d;
    }

    /// What OLM did, in order.
    pub fn steps(&self) -> Vec<String> {
        self.inner.steps.lock().expect("steps").clone()
    }
}

impl OlmInner {
    fn step(&self, s: String) {
        self.steps.lock().expect("steps").push(s);
    }

    fn catalog_of_image(&self, image: &str) -> Option<Catalog> {
        self.catalogs
            .lock()
            .expect("catalogs")
            .iter()
            .find(|(i, _)| i == image)
            .map(|(_, c)| c.clone())
    }

    /// A create through the API (for `generateName`), as the cluster admin.
    async fn create(
        &self,
        group: &str,
        version: &str,
        plural: &str,
        ns: &str,
        body: &Value,
    ) -> Result<Value, String> {
        use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};
        let ar = ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk(group, version, body["kind"].as_str().unwrap_or_default()),
            plural,
        );
        let api: Api<DynamicObject> = Api::namespaced_with(self.api.client(), ns, &ar);
        let o: DynamicObject = serde_json::from_value(body.clone()).map_err(|e| e.to_string())?;
        let created = api
            .create(&PostParams::default(), &o)
            .await
            .map_err(|e| e.to_string())?;
        serde_json::to_value(created).map_err(|e| e.to_string())
    }

    async fn tick(&self) {
        self.sync_catalog_sources();
        let namespaces: BTreeSet<String> = self
            .api
            .list(OLM, "subscriptions")
            .iter()
            .filter_map(|s| s["metadata"]["namespace"].as_str().map(str::to_string))
            .collect();
        for ns in namespaces {
            self.sync_namespace(&ns).await;
        }
        for plan in self.api.list(OLM, "installplans") {
            self.sync_plan(&plan).await;
        }
        let csvs = self.api.list(OLM, "clusterserviceversions");
        for csv in &csvs {
            self.sync_csv(csv, &csvs);
        }
        // CSVs that went since the last tick.
        let now: BTreeMap<String, Value> = self
            .api
            .list(OLM, "clusterserviceversions")
            .into_iter()
            .map(|c| {
                (
                    format!(
                        "{}/{}",
                        c["metadata"]["namespace"].as_str().unwrap_or_default(),
                        c["metadata"]["name"].as_str().unwrap_or_default()
                    ),
                    c,
                )
            })
            .collect();
        let gone: Vec<Value> = {
            let mut known = self.known_csvs.lock().expect("known");
            let gone = known
                .iter()
                .filter(|(k, _)| !now.contains_key(*k))
                .map(|(_, v)| v.clone())
                .collect();
            *known = now.clone();
            gone
        };
        let all: Vec<Value> = now.into_values().collect();
        for g in gone {
            self.csv_gone(&g, &all);
        }
    }
}
