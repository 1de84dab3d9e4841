//! The kubelet and the deployment controller, for Deployments whose image is a binary on this
//! machine: each replica is a real process ([`crate::process`]) with its own address, the
//! kubeconfig of its ServiceAccount, the downward-API environment, and the Secret volumes it
//! mounts written to files.
//!
//! - Rollouts follow the deployment controller's RollingUpdate arithmetic (`deployment_util.go ::
//!   MaxUnavailable, ResolveFenceposts`, cluster.md R6.5): at most `replicas + maxSurge` pods,
//!   old pods stopped only while `replicas - maxUnavailable` stay ready.
//! - The Deployment's status is written as `sync.go :: calculateStatus` writes it
//!   (`observedGeneration`, `replicas`, `updatedReplicas`, `readyReplicas`,
//!   `availableReplicas`, `unavailableReplicas`, condition `Available` with its reasons and
//!   messages, R6.4), so OLM's status viewer reads what it reads on a cluster.
//! - Readiness comes from the container's `readinessProbe` (HTTP GET, named ports resolved),
//!   probed every 200 ms (the kubelet's default period is 10 s; the double is faster, not
//!   looser). A container without a probe is ready while it runs.
//! - A container that exits is restarted (restartPolicy Always) after the kubelet's initial
//!   back-off of 10 s (`kubelet.go :: backOffPeriod`; doubling is not modelled); a pod being
//!   deleted gets SIGTERM, then SIGKILL after 5 s (`terminationGracePeriodSeconds` is not
//!   read).
//! - Pods are Pod objects in the API, owned by their Deployment (ReplicaSets are not
//!   modelled: the pod-template hash is a label of the pods); the Service resolver of the API
//!   ([`crate::api::ApiServer::set_resolver`]) sends a Service's traffic to a ready pod that
//!   matches its selector.
//!
//! Not modelled: several containers per pod, init containers, liveness probes, resource
//! limits, `securityContext`, env from Secrets or ConfigMaps (a pod that needs one is not
//! started, and says so), volumes other than Secrets, ConfigMaps, their projections and
//! `emptyDir` (not mounted), the atomic writer's `..data` directory (a file is replaced
//! whole), file modes.
//!
//! Volumes are written under the pod's directory, and an argument that names a path under a
//! mountPath is pointed there (the stand-in for the pod's mount namespace). Secret and
//! ConfigMap volumes follow their objects while the pod runs (the kubelet's periodic sync,
//! without its delay); a missing object or key stops the pod from starting unless its source
//! is `optional` (`MountVolume.SetUp failed ...`).

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{Value, json};

use crate::api::ApiServer;
use crate::api::rbac::UserInfo;
use crate::process::{Launch, Proc, http_get, pod_ip};

/// The kubelet's initial container restart back-off (`backOffPeriod`).
pub const RESTART_BACKOFF: Duration = Duration::from_secs(10);

/// How an image runs on this machine.
#[derive(Debug, Clone)]
pub struct ImageSpec {
    /// The binary (the image's entrypoint).
    pub bin: PathBuf,
    /// Flags that make the binary listen on the pod's address: (flag, container port name).
    /// The stand-in for a pod's own network namespace.
    pub listen_flags: Vec<(String, String)>,
    /// Flags that point the binary at a mounted volume's files: (flag, mountPath). The
    /// stand-in for a mount.
    pub mount_flags: Vec<(String, String)>,
}

/// A pod as the kubelet sees it.
#[derive(Debug, Clone)]
pub struct PodInfo {
    /// The pod's name.
    pub name: String,
    /// Its Deployment.
    pub deployment: String,
    /// Its address.
    pub ip: Ipv4Addr,
    /// Ready by its probe.
    pub ready: bool,
    /// Container restarts.
    pub restarts: u32,
    /// Being deleted.
    pub terminating: bool,
    /// The process id, while running.
    pub pid: Option<u32>,
}

struct Pod {
    name: String,
    namespace: String,
    deployment: String,
    hash: String,
    ip: Ipv4Addr,
    proc: Option<Proc>,
    launch: Option<Launch>,
    ready: bool,
    restarts: u32,
    exited_at: Option<Instant>,
    terminating: Option<Instant>,
    spec: Value,
    labels: Value,
    dir: PathBuf,
    problem: Option<String>,
}

struct Inner {
    api: ApiServer,
    url: String,
    images: Vec<(String, ImageSpec)>,
    dir: tempfile::TempDir,
    pods: Mutex<BTreeMap<String, Pod>>,
    seq: Mutex<u64>,
}

/// The kubelet and deployment controller double. Dropping it stops every pod.
pub struct Kubelet {
    inner: Arc<Inner>,
    task: tokio::task::JoinHandle<()>,
}

fn hash(v: &Value) -> String {
    use sha2::{Digest, Sha256};
    let h = Sha256::digest(v.to_string().as_bytes());
    h.iter()
        .take(5)
        .map(|b| format!("{b:02x}"))
        .collect::<String>()[..10]
        .to_string()
}

/// `GetScaledValueFromIntOrPercent`: an int, or a percentage of `total` rounded up or down.
fn scaled(v: &Value, total: i64, up: bool, default: &str) -> i64 {
    let s = match v {
        Value::Number(n) => return n.as_i64().unwrap_or(0),
        Value::String(s) => s.clone(),
        _ => default.to_string(),
    };
    let pct: f64 = s.trim_end_matches('%').parse().unwrap_or(0.0);
    let x = pct * total as f64 / 100.0;
    if up {
        x.ceil() as i64
    } else {
        x.floor() as i64
    }
}

/// (maxSurge, maxUnavailable) of a Deployment (`ResolveFenceposts`, R6.5).
pub fn fenceposts(d: &Value) -> (i64, i64) {
    let replicas = d["spec"]["replicas"].as_i64().unwrap_or(1);
    let strategy = &d["spec"]["strategy"];
    if strategy["type"] == "Recreate" || replicas == 0 {
        return (0, 0);
    }
    let ru = &strategy["rollingUpdate"];
    let surge = scaled(&ru["maxSurge"], replicas, true, "25%");
    let mut unavailable = scaled(&ru["maxUnavailable"], replicas, false, "25%");
    if surge == 0 && unavailable == 0 {
        unavailable = 1;
    }
    (surge, unavailable.min(replicas))
}

fn container_port(c: &Value, port: &Value) -> Option<u16> {
    match port {
        Value::Number(n) => n.as_u64().map(|p| p as u16),
        Value::String(name) => c["ports"]
            .as_array()?
            .iter()
            .find(|p| p["name"] == name.as_str())
            .and_then(|p| p["containerPort"].as_u64())
            .map(|p| p as u16),
        _ => None,
    }
}

fn labels_match(selector: &Value, labels: &Value) -> bool {
    selector
        .as_object()
        .is_some_and(|m| !m.is_empty() && m.iter().all(|(k, v)| labels[k] == *v))
}

/// An argument with a path under a volume's mountPath (the whole argument, or the value of
/// `--flag=value`) pointed at the volume's directory on this machine.
fn translate(arg: &str, mounts: &[(String, PathBuf)]) -> String {
    let (prefix, value) = match arg.split_once('=') {
        Some((flag, v)) if flag.starts_with('-') => (format!("{flag}="), v),
        _ => (String::new(), arg),
    };
    for (mount, dir) in mounts {
        let mount = mount.trim_end_matches('/');
        if value == mount {
            return format!("{prefix}{}", dir.display());
        }
        if let Some(rest) = value.strip_prefix(&format!("{mount}/")) {
            return format!("{prefix}{}", dir.join(rest).display());
        }
    }
    arg.to_string()
}

impl Kubelet {
    /// Starts the kubelet on the current tokio runtime; pods reach the API at `url` (from
    /// [`ApiServer::serve_on_loopback`]); `images` maps image prefixes (e.g.
    /// `ghcr.io/olmctl/olmctl-operator:`) to how they run.
    pub fn start(api: &ApiServer, url: &str, images: Vec<(String, ImageSpec)>) -> Kubelet {
        let inner = Arc::new(Inner {
            api: api.clone(),
            url: url.to_string(),
            images,
            dir: tempfile::tempdir().expect("kubelet dir"),
            pods: Mutex::new(BTreeMap::new()),
            seq: Mutex::new(0),
        });
        let r = inner.clone();
        api.set_resolver(Arc::new(move |ns, svc, port| r.resolve(ns, svc, port)));
        let me = inner.clone();
        let task = tokio::spawn(async move {
            loop {
                me.sync().await;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        });
        Kubelet { inner, task }
    }

    /// The pods of a Deployment, by name.
    pub fn pods(&self, namespace: &str, deployment: &str) -> Vec<PodInfo> {
        let pods = self.inner.pods.lock().expect("pods");
        pods.values()
            .filter(|p| p.namespace == namespace && p.deployment == deployment)
            .map(|p| PodInfo {
                name: p.name.clone(),
                deployment: p.deployment.clone(),
                ip: p.ip,
                ready: p.ready,
                restarts: p.restarts,
                terminating: p.terminating.is_some(),
                pid: p.proc.as_ref().map(Proc::pid),
            })
            .collect()
    }

    /// SIGKILL to a pod's process (a crash or an OOM kill: the container restarts).
    pub fn kill(&self, namespace: &str, pod: &str) {
        if let Some(p) = self
            .inner
            .pods
            .lock()
            .expect("pods")
            .get_mut(&format!("{namespace}/{pod}"))
            && let Some(proc) = p.proc.as_mut()
        {
            proc.kill();
        }
    }

    /// What a pod's process printed (every run).
    pub fn logs(&self, namespace: &str, pod: &str) -> String {
        let pods = self.inner.pods.lock().expect("pods");
        pods.get(&format!("{namespace}/{pod}"))
            .map(|p| {
                let mut s = std::fs::read_to_string(p.dir.join("log")).unwrap_or_default();
                if let Some(why) = &p.problem {
                    s.push_str(&format!("\n[kubelet] {why}\n"));
                }
                s
            })
            .unwrap_or_default()
    }

    /// Every pod's logs, for a failing test's message.
    pub fn all_logs(&self) -> String {
        let names: Vec<(String, String)> = self
            .inner
            .pods
            .lock()
            .expect("pods")
            .values()
            .map(|p| (p.namespace.clone(), p.name.clone()))
            .collect();
        names
            .iter()
            .map(|(ns, n)| format!("--- pod {ns}/{n} ---\n{}", self.logs(ns, n)))
            .collect()
    }
}

impl Drop for Kubelet {
    fn drop(&mut self) {
        self.task.abort();
        if let Ok(mut pods) = self.inner.pods.lock() {
            for p in pods.values_mut() {
                if let Some(proc) = p.proc.as_mut() {
                    proc.kill();
                }
            }
        }
    }
}

impl Inner {
    fn image(&self, image: &str) -> Option<&ImageSpec> {
        self.images
            .iter()
            .find(|(prefix, _)| image.starts_with(prefix.as_str()))
            .map(|(_, s)| s)
    }

    /// The address of a ready pod behind a Service port.
    fn resolve(&self, ns: &str, svc: &str, port: u16) -> Option<SocketAddr> {
        let service = self.api.get("", "services", ns, svc)?;
        let sp = service["spec"]["ports"]
            .as_array()?
            .iter()
            .find(|p| p["port"].as_u64() == Some(port as u64))?
            .clone();
        let target = if sp["targetPort"].is_null() {
            json!(port)
        } else {
            sp["targetPort"].clone()
        };
        let pods = self.pods.lock().ok()?;
        pods.values()
            .filter(|p| p.namespace == ns && p.ready && p.terminating.is_none())
            .filter(|p| labels_match(&service["spec"]["selector"], &p.labels))
            .find_map(|p| {
                let c = &p.spec["containers"][0];
                container_port(c, &target).map(|port| SocketAddr::from((p.ip, port)))
            })
    }

    fn launch(&self, pod: &Pod) -> Result<Launch, String> {
        let spec = &pod.spec;
        let containers = spec["containers"].as_array().cloned().unwrap_or_default();
        if containers.len() != 1 {
            return Err(format!(
                "{} containers: only pods of one container are modelled",
                containers.len()
            ));
        }
        let c = &containers[0];
        let image = c["image"].as_str().unwrap_or_default();
        let img = self
            .image(image)
            .ok_or_else(|| format!("image {image:?} is not known to the kubelet double"))?;
        let sa = spec["serviceAccountName"].as_str().unwrap_or("default");
        if sa != "default"
            && self
                .api
                .get("", "serviceaccounts", &pod.namespace, sa)
                .is_none()
        {
            return Err(format!(
                "error looking up service account {}/{sa}: serviceaccount \"{sa}\" not found",
                pod.namespace
            ));
        }
        let mut args: Vec<String> = c["command"]
            .as_array()
            .into_iter()
            .flatten()
            .skip(1)
            .chain(c["args"].as_array().into_iter().flatten())
            .filter_map(|a| a.as_str().map(str::to_string))
            .collect();
        for (flag, port) in &img.listen_flags {
            let p = container_port(c, &json!(port))
                .ok_or_else(|| format!("container port {port:?} is not declared"))?;
            args.push(format!("{flag}={}", SocketAddr::from((pod.ip, p))));
        }
        // Volumes: their files under the pod's directory; a path under a mount in the
        // arguments points there (the stand-in for a mount namespace).
        let mounts = self.write_volumes(&pod.namespace, &pod.spec, &pod.dir)?;
        for a in &mut args {
            *a = translate(a, &mounts);
        }
        for (mount, dir) in &mounts {
            if let Some((flag, _)) = img.mount_flags.iter().find(|(_, p)| p == mount) {
                args.push(format!("{flag}={}", dir.display()));
            }
        }
        let mut env = Vec::new();
        for e in c["env"].as_array().into_iter().flatten() {
            let name = e["name"].as_str().unwrap_or_default().to_string();
            let value = if let Some(v) = e["value"].as_str() {
                v.to_string()
            } else if let Some(f) = e["valueFrom"]["fieldRef"]["fieldPath"].as_str() {
                match f {
                    "metadata.name" => pod.name.clone(),
                    "metadata.namespace" => pod.namespace.clone(),
                    "status.podIP" => pod.ip.to_string(),
                    other => return Err(format!("env {name}: fieldRef {other} is not modelled")),
                }
            } else if e["valueFrom"].is_object() {
                return Err(format!("env {name}: only value and fieldRef are modelled"));
            } else {
                String::new()
            };
            env.push((name, value));
        }
        let token = self
            .api
            .token_for(UserInfo::service_account(&pod.namespace, sa));
        Ok(Launch {
            bin: img.bin.clone(),
            args,
            env,
            dir: pod.dir.clone(),
            kubeconfig: crate::api::kubeconfig(&self.url, &token, &pod.namespace),
        })
    }

    /// Writes the volumes the container mounts under the pod's directory, as the kubelet's
    /// volume plugins set them up (`pkg/volume/secret`, `pkg/volume/configmap :: SetUpAt,
    /// MakePayload`, `pkg/volume/projected :: collectData`): a Secret's or ConfigMap's keys
    /// (or its `items`) as files; a missing object or key is an error unless the source is
    /// `optional`, when it contributes nothing; `emptyDir` is an empty directory. Files that
    /// are no longer in the payload are removed. Returns (mountPath, directory) per mount.
    fn write_volumes(
        &self,
        ns: &str,
        spec: &Value,
        pod_dir: &Path,
    ) -> Result<Vec<(String, PathBuf)>, String> {
        let volumes = spec["volumes"].as_array().cloned().unwrap_or_default();
        let mut out = Vec::new();
        for m in spec["containers"][0]["volumeMounts"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let mount = m["mountPath"].as_str().unwrap_or_default();
            let Some(v) = volumes.iter().find(|v| v["name"] == m["name"]) else {
                return Err(format!("volume {} is not declared", m["name"]));
            };
            let sources: Vec<(&str, &Value)> = if v["secret"].is_object() {
                vec![("secret", &v["secret"])]
            } else if v["configMap"].is_object() {
                vec![("configMap", &v["configMap"])]
            } else if let Some(srcs) = v["projected"]["sources"].as_array() {
                let mut all = Vec::new();
                for src in srcs {
                    if src["secret"].is_object() {
                        all.push(("secret", &src["secret"]));
                    } else if src["configMap"].is_object() {
                        all.push(("configMap", &src["configMap"]));
                    } else {
                        return Err(format!(
                            "volume {}: projected sources other than secrets and configMaps are not modelled",
                            m["name"]
                        ));
                    }
                }
                all
            } else if v["emptyDir"].is_object() {
                Vec::new()
            } else {
                continue;
            };
            let mut files = BTreeMap::new();
            for (kind, src) in sources {
                files.extend(self.payload(ns, &v["name"], kind, src)?);
            }
            let dir = pod_dir.join("volumes").join(mount.trim_start_matches('/'));
            std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
            for e in std::fs::read_dir(&dir)
                .map_err(|e| e.to_string())?
                .flatten()
            {
                let name = e.file_name().to_string_lossy().into_owned();
                if e.path().is_file() && !files.contains_key(&name) {
                    std::fs::remove_file(e.path()).map_err(|e| e.to_string())?;
                }
            }
            for (name, bytes) in files {
                let path = dir.join(&name);
                if std::fs::read(&path).ok().as_deref() == Some(bytes.as_slice()) {
                    continue;
                }
                // Replaced whole, as the kubelet's atomic writer swaps its data directory.
                let tmp = dir.join(format!("..tmp-{name}"));
                std::fs::write(&tmp, &bytes).map_err(|e| e.to_string())?;
                std::fs::rename(&tmp, &path).map_err(|e| e.to_string())?;
            }
            out.push((mount.to_string(), dir));
        }
        Ok(out)
    }

    /// The files one Secret or ConfigMap source contributes (`MakePayload`).
    fn payload(
        &self,
        ns: &str,
        volume: &Value,
        kind: &str,
        src: &Value,
    ) -> Result<BTreeMap<String, Vec<u8>>, String> {
        let (resource, name) = if kind == "secret" {
            (
                "secrets",
                src["secretName"].as_str().or(src["name"].as_str()),
            )
        } else {
            ("configmaps", src["name"].as_str())
        };
        let name = name.unwrap_or_default();
        let optional = src["optional"].as_bool().unwrap_or(false);
        let what = if kind == "secret" {
            "secret"
        } else {
            "configmap"
        };
        let Some(obj) = self.api.get("", resource, ns, name) else {
            if optional {
                return Ok(BTreeMap::new());
            }
            return Err(format!(
                "MountVolume.SetUp failed for volume {volume}: {what} \"{name}\" not found"
            ));
        };
        let mut data = BTreeMap::new();
        let b64 = |k: &str, v: &Value| {
            base64::engine::general_purpose::STANDARD
                .decode(v.as_str().unwrap_or_default())
                .map_err(|e| format!("{what} {name} key {k}: {e}"))
        };
        for (k, v) in obj["data"].as_object().into_iter().flatten() {
            let bytes = if kind == "secret" {
                b64(k, v)?
            } else {
                v.as_str().unwrap_or_default().as_bytes().to_vec()
            };
            data.insert(k.clone(), bytes);
        }
        if kind == "configMap" {
            for (k, v) in obj["binaryData"].as_object().into_iter().flatten() {
                data.insert(k.clone(), b64(k, v)?);
            }
        }
        let Some(items) = src["items"].as_array() else {
            return Ok(data);
        };
        let mut files = BTreeMap::new();
        for item in items {
            let key = item["key"].as_str().unwrap_or_default();
            match data.get(key) {
                Some(bytes) => {
                    files.insert(
                        item["path"].as_str().unwrap_or(key).to_string(),
                        bytes.clone(),
                    );
                }
                None if optional => {}
                None => {
                    return Err(format!(
                        "MountVolume.SetUp failed for volume {volume}: {what} references non-existent {} key: {key}",
                        if kind == "secret" { "secret" } else { "config" }
                    ));
                }
            }
        }
        Ok(files)
    }

    fn new_pod(&self, d: &Value, h: &str) -> Pod {
        let ns = d["metadata"]["namespace"].as_str().unwrap_or_default();
        let dname = d["metadata"]["name"].as_str().unwrap_or_default();
        let n = {
            let mut s = self.seq.lock().expect("seq");
            *s += 1;
            *s
        };
        let name = format!("{dname}-{h}-{n:05}");
        let mut labels = d["spec"]["template"]["metadata"]["labels"].clone();
        labels["pod-template-hash"] = json!(h);
        Pod {
            dir: self.dir.path().join(format!("{ns}-{name}")),
            name,
            namespace: ns.into(),
            deployment: dname.into(),
            hash: h.into(),
            ip: pod_ip(),
            proc: None,
            launch: None,
            ready: false,
            restarts: 0,
            exited_at: None,
            terminating: None,
            spec: d["spec"]["template"]["spec"].clone(),
            labels,
            problem: None,
        }
    }

    fn write_pod(&self, p: &Pod, uid: &Value) {
        let phase = if p.proc.is_some() {
            "Running"
        } else {
            "Pending"
        };
        self.api.insert(
            "pods",
            json!({
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": p.name, "namespace": p.namespace, "labels": p.labels,
                    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment",
                        "name": p.deployment, "uid": uid, "controller": true, "blockOwnerDeletion": true}]},
                "spec": p.spec,
                "status": {"phase": phase, "podIP": p.ip.to_string(),
                    "conditions": [{"type": "Ready", "status": if p.ready {"True"} else {"False"}}],
                    "containerStatuses": [{"name": p.spec["containers"][0]["name"], "ready": p.ready,
                        "restartCount": p.restarts}]}
            }),
        );
    }

    async fn sync(&self) {
        let deployments = self.api.list("apps", "deployments");
        let now = Instant::now();
        // Processes that ended; pods whose Deployment is gone; terminations that finished.
        {
            let mut pods = self.pods.lock().expect("pods");
            let live: Vec<String> = deployments
                .iter()
                .filter(|d| !d["metadata"]["deletionTimestamp"].is_string())
                .map(|d| {
                    format!(
                        "{}/{}",
                        d["metadata"]["namespace"].as_str().unwrap_or_default(),
                        d["metadata"]["name"].as_str().unwrap_or_default()
                    )
                })
                .collect();
            let mut gone = Vec::new();
            for (k, p) in pods.iter_mut() {
                if !live.contains(&format!("{}/{}", p.namespace, p.deployment))
                    && p.terminating.is_none()
                {
                    p.terminating = Some(now);
                    if let Some(proc) = &p.proc {
                        proc.terminate();
                    }
                }
                if let Some(proc) = p.proc.as_mut()
                    && proc.exited().is_some()
                {
                    p.proc = None;
                    p.ready = false;
                    p.exited_at = Some(now);
                }
                if let Some(t) = p.terminating {
                    if p.proc.is_none() {
                        gone.push(k.clone());
                    } else if now.duration_since(t) > Duration::from_secs(5)
                        && let Some(proc) = p.proc.as_mut()
                    {
                        proc.kill();
                    }
                }
            }
            for k in gone {
                if let Some(p) = pods.remove(&k) {
                    self.api.delete("", "pods", &p.namespace, &p.name);
                }
            }
        }
        for d in &deployments {
            if d["metadata"]["deletionTimestamp"].is_string() {
                continue;
            }
            let image = d["spec"]["template"]["spec"]["containers"][0]["image"]
                .as_str()
                .unwrap_or_default();
            if self.image(image).is_none() {
                continue;
            }
            self.rollout(d).await;
        }
        // Volumes of running pods follow their Secrets and ConfigMaps (the kubelet's periodic
        // sync, without its delay); a source that went away leaves the files as they were.
        let running: Vec<(String, Value, PathBuf)> = {
            let pods = self.pods.lock().expect("pods");
            pods.values()
                .filter(|p| p.proc.is_some())
                .map(|p| (p.namespace.clone(), p.spec.clone(), p.dir.clone()))
                .collect()
        };
        for (ns, spec, dir) in running {
            let _ = self.write_volumes(&ns, &spec, &dir);
        }
        // Probes.
        let probes: Vec<(String, Option<SocketAddr>, String)> = {
            let pods = self.pods.lock().expect("pods");
            pods.iter()
                .filter(|(_, p)| p.proc.is_some())
                .map(|(k, p)| {
                    let c = &p.spec["containers"][0];
                    let probe = &c["readinessProbe"]["httpGet"];
                    let addr = if probe.is_object() {
                        container_port(c, &probe["port"]).map(|port| SocketAddr::from((p.ip, port)))
                    } else {
                        None
                    };
                    (
                        k.clone(),
                        addr,
                        probe["path"].as_str().unwrap_or("/").to_string(),
                    )
                })
                .collect()
        };
        for (k, addr, path) in probes {
            let ready = match addr {
                Some(a) => http_get(a, &path)
                    .await
                    .is_some_and(|(code, _)| (200..400).contains(&code)),
                None => true,
            };
            if let Some(p) = self.pods.lock().expect("pods").get_mut(&k) {
                p.ready = ready && p.proc.is_some();
            }
        }
        // Pod objects and Deployment status.
        for d in &deployments {
            self.write_status(d);
        }
    }

    async fn rollout(&self, d: &Value) {
        let ns = d["metadata"]["namespace"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let dname = d["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let desired = d["spec"]["replicas"].as_i64().unwrap_or(1);
        let h = hash(&d["spec"]["template"]);
        let (surge, unavailable) = fenceposts(d);
        let mut to_start: Vec<String> = Vec::new();
        {
            let mut pods = self.pods.lock().expect("pods");
            let mine =
                |p: &Pod| p.namespace == ns && p.deployment == dname && p.terminating.is_none();
            let new: Vec<String> = pods
                .iter()
                .filter(|(_, p)| mine(p) && p.hash == h)
                .map(|(k, _)| k.clone())
                .collect();
            let old: Vec<String> = pods
                .iter()
                .filter(|(_, p)| mine(p) && p.hash != h)
                .map(|(k, _)| k.clone())
                .collect();
            let total = (new.len() + old.len()) as i64;
            // Scale the new ReplicaSet up within the surge.
            let mut n_new = new.len() as i64;
            let mut n_total = total;
            while n_new < desired && n_total < desired + surge {
                let p = self.new_pod(d, &h);
                let k = format!("{ns}/{}", p.name);
                pods.insert(k.clone(), p);
                to_start.push(k);
                n_new += 1;
                n_total += 1;
            }
            // Too many new pods (scaled down): stop the surplus.
            for k in new.iter().skip(desired.max(0) as usize) {
                if let Some(p) = pods.get_mut(k) {
                    p.terminating = Some(Instant::now());
                    if let Some(proc) = &p.proc {
                        proc.terminate();
                    }
                }
            }
            // Scale the old down while enough stay available.
            let ready = |pods: &BTreeMap<String, Pod>, ks: &[String]| {
                ks.iter()
                    .filter(|k| pods.get(*k).is_some_and(|p| p.ready))
                    .count() as i64
            };
            let mut available = ready(&pods, &new) + ready(&pods, &old);
            let mut old_sorted = old.clone();
            // Unready old pods first.
            old_sorted.sort_by_key(|k| pods.get(k).is_some_and(|p| p.ready));
            for k in old_sorted {
                let was_ready = pods.get(&k).is_some_and(|p| p.ready);
                if !was_ready || available > desired - unavailable {
                    if let Some(p) = pods.get_mut(&k) {
                        p.terminating = Some(Instant::now());
                        if let Some(proc) = &p.proc {
                            proc.terminate();
                        }
                    }
                    if was_ready {
                        available -= 1;
                    }
                }
            }
            // Restarts of exited containers (the kubelet's back-off, 10 s).
            for (k, p) in pods.iter_mut() {
                if p.proc.is_none()
                    && p.terminating.is_none()
                    && p.namespace == ns
                    && p.deployment == dname
                    && p.exited_at.is_some_and(|t| t.elapsed() > RESTART_BACKOFF)
                {
                    p.restarts += 1;
                    p.exited_at = None;
                    to_start.push(k.clone());
                }
                if p.proc.is_none()
                    && p.terminating.is_none()
                    && p.exited_at.is_none()
                    && p.launch.is_none()
                    && !to_start.contains(k)
                {
                    // A pod that could not start yet (a Secret, a ServiceAccount): try again.
                    to_start.push(k.clone());
                }
            }
        }
        for k in to_start {
            let launch = {
                let pods = self.pods.lock().expect("pods");
                let Some(p) = pods.get(&k) else { continue };
                match &p.launch {
                    Some(l) if p.restarts > 0 => Ok(l.clone()),
                    _ => self.launch(p),
                }
            };
            let mut pods = self.pods.lock().expect("pods");
            let Some(p) = pods.get_mut(&k) else { continue };
            match launch {
                Ok(l) => match Proc::start(&l) {
                    Ok(proc) => {
                        p.proc = Some(proc);
                        p.launch = Some(l);
                        p.problem = None;
                    }
                    Err(e) => p.problem = Some(format!("cannot start: {e}")),
                },
                Err(e) => p.problem = Some(e),
            }
        }
    }

    fn write_status(&self, d: &Value) {
        let ns = d["metadata"]["namespace"].as_str().unwrap_or_default();
        let dname = d["metadata"]["name"].as_str().unwrap_or_default();
        let uid = d["metadata"]["uid"].clone();
        let h = hash(&d["spec"]["template"]);
        let desired = d["spec"]["replicas"].as_i64().unwrap_or(1);
        let (_, unavailable) = fenceposts(d);
        let (replicas, updated, ready) = {
            let pods = self.pods.lock().expect("pods");
            let mine: Vec<&Pod> = pods
                .values()
                .filter(|p| p.namespace == ns && p.deployment == dname)
                .collect();
            for p in &mine {
                let cur = self.api.get("", "pods", ns, &p.name);
                let want_ready = if p.ready { "True" } else { "False" };
                let changed = cur.as_ref().is_none_or(|c| {
                    c["status"]["conditions"][0]["status"] != want_ready
                        || c["status"]["containerStatuses"][0]["restartCount"] != p.restarts
                        || (c["status"]["phase"] == "Pending") == p.proc.is_some()
                });
                if changed && p.terminating.is_none() {
                    self.write_pod(p, &uid);
                }
            }
            let live: Vec<&&Pod> = mine
                .iter()
                .filter(|p| p.terminating.is_none() || p.proc.is_some())
                .collect();
            (
                live.len() as i64,
                live.iter().filter(|p| p.hash == h).count() as i64,
                live.iter().filter(|p| p.ready).count() as i64,
            )
        };
        let available = ready;
        let ok = available >= desired - unavailable;
        let old = &d["status"];
        let cond = |ty: &str, status: bool, reason: &str, message: &str| {
            let prev = old["conditions"]
                .as_array()
                .and_then(|c| c.iter().find(|c| c["type"] == ty));
            let s = if status { "True" } else { "False" };
            let since = match prev {
                Some(p) if p["status"] == s => p["lastTransitionTime"].clone(),
                _ => json!(
                    jiff::Timestamp::now()
                        .strftime("%Y-%m-%dT%H:%M:%SZ")
                        .to_string()
                ),
            };
            json!({"type": ty, "status": s, "reason": reason, "message": message,
                   "lastTransitionTime": since, "lastUpdateTime": since})
        };
        let complete = updated == desired && replicas == desired && available == desired;
        let status = json!({
            "observedGeneration": d["metadata"]["generation"],
            "replicas": replicas,
            "updatedReplicas": updated,
            "readyReplicas": ready,
            "availableReplicas": available,
            "unavailableReplicas": (desired - available).max(0),
            "conditions": [
                if ok {
                    cond("Available", true, "MinimumReplicasAvailable", "Deployment has minimum availability.")
                } else {
                    cond("Available", false, "MinimumReplicasUnavailable", "Deployment does not have minimum availability.")
                },
                if complete {
                    cond("Progressing", true, "NewReplicaSetAvailable", &format!("ReplicaSet \"{dname}-{h}\" has successfully progressed."))
                } else {
                    cond("Progressing", true, "ReplicaSetUpdated", &format!("ReplicaSet \"{dname}-{h}\" is progressing."))
                },
            ],
        });
        let same = [
            "observedGeneration",
            "replicas",
            "updatedReplicas",
            "readyReplicas",
            "availableReplicas",
            "unavailableReplicas",
        ]
        .iter()
        .all(|k| old[*k] == status[*k])
            && old["conditions"].as_array().map(|c| {
                c.iter()
                    .map(|c| (c["type"].clone(), c["status"].clone(), c["reason"].clone()))
                    .collect::<Vec<_>>()
            }) == status["conditions"].as_array().map(|c| {
                c.iter()
                    .map(|c| (c["type"].clone(), c["status"].clone(), c["reason"].clone()))
                    .collect::<Vec<_>>()
            });
        if !same && self.api.get("apps", "deployments", ns, dname).is_some() {
            self.api.merge(
                "apps",
                "deployments",
                ns,
                dname,
                &json!({"status": status}),
                true,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kubelet(api: &ApiServer) -> Inner {
        Inner {
            api: api.clone(),
            url: String::new(),
            images: Vec::new(),
            dir: tempfile::tempdir().expect("dir"),
            pods: Mutex::new(BTreeMap::new()),
            seq: Mutex::new(0),
        }
    }

    fn pod_spec(volume: Value) -> Value {
        json!({"containers": [{"name": "c", "image": "x",
            "volumeMounts": [{"name": "v", "mountPath": "/var/ca-certs", "readOnly": true}]}],
            "volumes": [volume]})
    }

    fn files(dir: &Path) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = std::fs::read_dir(dir)
            .expect("dir")
            .flatten()
            .map(|e| {
                (
                    e.file_name().to_string_lossy().into_owned(),
                    std::fs::read_to_string(e.path()).expect("read"),
                )
            })
            .collect();
        out.sort();
        out
    }

    /// A projected volume of two optional ConfigMaps: empty while neither exists, one file
    /// per key (or per item) once they do, following changes and removals; an item whose key
    /// is missing is skipped only when optional; a required missing ConfigMap is an error.
    #[test]
    fn configmap_volumes_follow_their_objects_and_honour_optional() {
        let api = ApiServer::new();
        let k = kubelet(&api);
        let pod_dir = k.dir.path().join("pod");
        let projected = pod_spec(json!({"name": "v", "projected": {"sources": [
            {"configMap": {"name": "mine", "optional": true}},
            {"configMap": {"name": "openshift-service-ca.crt", "optional": true,
                           "items": [{"key": "service-ca.crt", "path": "service-ca.crt"}]}}]}}));
        let mounts = k
            .write_volumes("ns", &projected, &pod_dir)
            .expect("optional");
        let dir = pod_dir.join("volumes/var/ca-certs");
        assert_eq!(mounts, vec![("/var/ca-certs".to_string(), dir.clone())]);
        assert_eq!(files(&dir), vec![]);

        api.insert(
            "configmaps",
            json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "mine", "namespace": "ns"}, "data": {"ca.crt": "A"},
            "binaryData": {"b.crt": "Qg=="}}),
        );
        api.insert("configmaps", json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "openshift-service-ca.crt", "namespace": "ns"}, "data": {"other": "x"}}));
        k.write_volumes("ns", &projected, &pod_dir)
            .expect("optional key");
        assert_eq!(
            files(&dir),
            vec![("b.crt".into(), "B".into()), ("ca.crt".into(), "A".into())]
        );
        api.merge(
            "",
            "configmaps",
            "ns",
            "openshift-service-ca.crt",
            &json!({"data": {"service-ca.crt": "S"}}),
            false,
        );
        api.merge(
            "",
            "configmaps",
            "ns",
            "mine",
            &json!({"data": {"ca.crt": "A2"}, "binaryData": null}),
            false,
        );
        k.write_volumes("ns", &projected, &pod_dir)
            .expect("updated");
        assert_eq!(
            files(&dir),
            vec![
                ("ca.crt".into(), "A2".into()),
                ("service-ca.crt".into(), "S".into())
            ]
        );

        let required = pod_spec(json!({"name": "v", "configMap": {"name": "absent"}}));
        assert_eq!(
            k.write_volumes("ns", &required, &pod_dir),
            Err("MountVolume.SetUp failed for volume \"v\": configmap \"absent\" not found".into())
        );
        let missing_key = pod_spec(json!({"name": "v", "configMap": {"name": "mine",
            "items": [{"key": "nope", "path": "p"}]}}));
        assert_eq!(
            k.write_volumes("ns", &missing_key, &pod_dir),
            Err("MountVolume.SetUp failed for volume \"v\": configmap references non-existent config key: nope".into())
        );
    }

    /// Arguments naming a path under a mountPath point at the volume's directory here.
    #[test]
    fn arguments_under_a_mount_are_translated() {
        let mounts = vec![("/var/ca-certs".to_string(), PathBuf::from("/tmp/p/v"))];
        assert_eq!(
            translate("--catalogd-cas-dir=/var/ca-certs", &mounts),
            "--catalogd-cas-dir=/tmp/p/v"
        );
        assert_eq!(translate("/var/ca-certs/a.crt", &mounts), "/tmp/p/v/a.crt");
        assert_eq!(
            translate("--x=/var/ca-certsy", &mounts),
            "--x=/var/ca-certsy"
        );
        assert_eq!(translate("run", &mounts), "run");
    }
}
