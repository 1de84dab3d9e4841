//! Leader election with a `coordination.k8s.io/v1` Lease, following client-go's
//! `tools/leaderelection` (le.go) and `resourcelock/leaselock.go` as the vendored copy in OLM
//! has them (cluster.md §1):
//!
//! - durations: lease duration > renew deadline > 1.2 × retry period, all positive
//!   (`NewLeaderElector`, R1.1); controller-runtime's defaults 15 s / 10 s / 2 s (R1.2);
//! - expiry is judged on this candidate's own monotonic clock: a lease held by another is
//!   valid until `observedTime + leaseDurationSeconds`, where `observedTime` is when this
//!   candidate last saw the record change; the holder's `renewTime` is never compared with
//!   the local clock, so clock skew between nodes does not matter (`isLeaseValid`,
//!   `tryAcquireOrRenew`, R1.6); an empty holder is free at once (R1.7);
//! - every write is an `Update` carrying the resourceVersion last read or written, so two
//!   candidates cannot both win; the holder renews on its cached object first and falls back
//!   to Get + Update (R1.8);
//! - while leading, each renewal retries every retry period for at most the renew deadline;
//!   when none succeeds in that time leadership is lost (`renew`, R1.9), and every API call
//!   has a timeout of `max(renewDeadline / 2, 1 s)` (controller-runtime's client timeout), so
//!   a hung API server cannot keep a stale leader acting;
//! - on shutdown the holder releases the Lease: holder `""`, duration 1 s, transitions kept
//!   (`release`, R1.10), so the next candidate takes over at once.
//!
//! The rest of the process asks [`Leadership::is_leader`], which is true only until the start
//! of the last successful renewal plus the renew deadline: a write is fenced by that instant,
//! which comes before any other candidate can see the lease expire.

use std::sync::Mutex;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, OwnerReference};
use kube::Client;
use kube::api::{Api, PostParams};
use tokio::time::Instant;

/// client-go's `JitterFactor`.
pub const JITTER_FACTOR: f64 = 1.2;

/// The election's timing (client-go `LeaderElectionConfig`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// How long a non-holder waits after it last saw the record change before taking over.
    pub lease_duration: Duration,
    /// How long the holder keeps retrying a renewal before it gives up leading.
    pub renew_deadline: Duration,
    /// How often candidates try to acquire and the holder renews.
    pub retry_period: Duration,
}

impl Default for Timing {
    /// controller-runtime's defaults (`manager/internal.go`).
    fn default() -> Self {
        Timing {
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
        }
    }
}

impl Timing {
    /// The checks of client-go's `NewLeaderElector` (R1.1), with its messages.
    pub fn validate(&self) -> Result<(), String> {
        if self.lease_duration <= self.renew_deadline {
            return Err("leaseDuration must be greater than renewDeadline".into());
        }
        if self.renew_deadline.as_secs_f64() <= JITTER_FACTOR * self.retry_period.as_secs_f64() {
            return Err("renewDeadline must be greater than retryPeriod*JitterFactor".into());
        }
        if self.lease_duration.is_zero() {
            return Err("leaseDuration must be greater than zero".into());
        }
        if self.renew_deadline.is_zero() {
            return Err("renewDeadline must be greater than zero".into());
        }
        if self.retry_period.is_zero() {
            return Err("retryPeriod must be greater than zero".into());
        }
        Ok(())
    }

    /// The timeout of every API call (controller-runtime: `max(RenewDeadline/2, 1s)`).
    pub fn call_timeout(&self) -> Duration {
        (self.renew_deadline / 2).max(Duration::from_secs(1))
    }
}

/// Whether this replica may act now, shared with the controller.
#[derive(Debug, Default)]
pub struct Leadership {
    until: Mutex<Option<Instant>>,
}

impl Leadership {
    /// True while leading: until the start of the last successful renewal plus the renew
    /// deadline.
    pub fn is_leader(&self) -> bool {
        self.until
            .lock()
            .map(|u| u.is_some_and(|u| Instant::now() < u))
            .unwrap_or(false)
    }

    /// The instant leadership ends unless renewed.
    pub fn until(&self) -> Option<Instant> {
        self.until.lock().ok().and_then(|u| *u)
    }

    /// Leads until `until` (none: not leading). The elector's; tests set it directly.
    pub fn set_until(&self, until: Option<Instant>) {
        if let Ok(mut u) = self.until.lock() {
            *u = until;
        }
    }
}

/// How [`Elector::run`] ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// Leadership was lost (no renewal within the renew deadline, or another holder).
    Lost,
    /// Shut down as asked (the Lease was released if held).
    Stopped,
}

/// A candidate for the Lease.
pub struct Elector {
    client: Client,
    namespace: String,
    owner_deployment: Option<String>,
    api: Api<Lease>,
    name: String,
    identity: String,
    timing: Timing,
    clock: crate::Clock,
    /// The record last seen, and when it was first seen as it is (client-go's
    /// `observedRecord`, `observedRawRecord`, `observedTime`).
    observed: Option<(String, Instant)>,
    /// The Lease as last read or written (for the holder's fast path).
    cached: Option<Lease>,
}

fn micro(t: jiff::Timestamp) -> MicroTime {
    MicroTime(crate::to_k8s_time(t))
}

/// A unique identity for this process: `<name>_<random>` (controller-runtime:
/// `<hostname>_<uuid>`).
pub fn identity(name: &str) -> String {
    format!("{name}_{:016x}{:016x}", random_u64(), random_u64())
}

/// A random number from the standard library's per-process hash keys (no RNG dependency).
fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    h.write_u32(std::process::id());
    h.finish()
}

/// `RetryPeriod + rand × JitterFactor × RetryPeriod` (`wait.Jitter`).
fn jittered(period: Duration) -> Duration {
    let r = (random_u64() >> 11) as f64 / (1u64 << 53) as f64;
    period + period.mul_f64(r * JITTER_FACTOR)
}

impl Elector {
    /// A candidate `identity` for Lease `namespace/name`.
    pub fn new(
        client: Client,
        namespace: &str,
        name: &str,
        identity: &str,
        timing: Timing,
        clock: crate::Clock,
    ) -> Result<Self, String> {
        timing.validate()?;
        if identity.is_empty() {
            return Err("Lock identity is empty".into());
        }
        Ok(Elector {
            client: client.clone(),
            namespace: namespace.into(),
            owner_deployment: None,
            api: Api::namespaced(client, namespace),
            name: name.into(),
            identity: identity.into(),
            timing,
            clock,
            observed: None,
            cached: None,
        })
    }

    /// This candidate's identity.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// The Lease this candidate creates is owned by Deployment `name` of its namespace (the
    /// operator's own), so that the garbage collector removes it with the Deployment when
    /// the operator is uninstalled.
    pub fn owned_by_deployment(mut self, name: Option<String>) -> Self {
        self.owner_deployment = name;
        self
    }

    /// The owner reference to the Deployment, when one is named and readable.
    async fn owner(&self) -> Option<OwnerReference> {
        let name = self.owner_deployment.as_deref()?;
        let api: Api<Deployment> = Api::namespaced(self.client.clone(), &self.namespace);
        match tokio::time::timeout(self.timing.call_timeout(), api.get_opt(name)).await {
            Ok(Ok(Some(d))) => Some(OwnerReference {
                api_version: "apps/v1".into(),
                kind: "Deployment".into(),
                name: name.into(),
                uid: d.metadata.uid.unwrap_or_default(),
                controller: Some(false),
                block_owner_deletion: Some(false),
            }),
            Ok(Ok(None)) => {
                tracing::warn!(
                    deployment = name,
                    "the Lease's owner Deployment is not there; the Lease is created without an owner"
                );
                None
            }
            Ok(Err(e)) => {
                tracing::warn!(deployment = name, error = %e, "the Lease's owner Deployment cannot be read; the Lease is created without an owner");
                None
            }
            Err(_) => None,
        }
    }

    /// One API call with the client timeout; a 409 (AlreadyExists, Conflict) is `Ok(None)`.
    async fn timed<T>(
        &self,
        f: impl std::future::Future<Output = Result<T, kube::Error>>,
    ) -> Result<Option<T>, String> {
        match tokio::time::timeout(self.timing.call_timeout(), f).await {
            Ok(Ok(v)) => Ok(Some(v)),
            Ok(Err(kube::Error::Api(s))) if s.code == 409 => Ok(None),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!(
                "no answer from the API server within {:?}",
                self.timing.call_timeout()
            )),
        }
    }

    fn observe(&mut self, spec: &LeaseSpec, now: Instant) {
        let raw = serde_json::to_string(spec).unwrap_or_default();
        if self.observed.as_ref().map(|(r, _)| r) != Some(&raw) {
            self.observed = Some((raw, now));
        }
    }

    fn record(&self, old: Option<&LeaseSpec>) -> LeaseSpec {
        let now = micro((self.clock)());
        let mine = old.and_then(|o| o.holder_identity.as_deref()) == Some(self.identity.as_str());
        let (acquire_time, transitions) = match old {
            Some(o) if mine => (o.acquire_time.clone(), o.lease_transitions.unwrap_or(0)),
            Some(o) => (Some(now.clone()), o.lease_transitions.unwrap_or(0) + 1),
            None => (Some(now.clone()), 0),
        };
        LeaseSpec {
            holder_identity: Some(self.identity.clone()),
            lease_duration_seconds: Some(self.timing.lease_duration.as_secs().max(1) as i32),
            acquire_time,
            renew_time: Some(now),
            lease_transitions: Some(transitions),
            ..Default::default()
        }
    }

    /// One attempt (client-go `tryAcquireOrRenew`): acquires a free or expired Lease, renews
    /// one this candidate holds, or respects another holder's. Returns whether this candidate
    /// holds the Lease now.
    pub async fn try_acquire_or_renew(&mut self) -> Result<bool, String> {
        let now = Instant::now();
        // Fast path: the holder whose lease is still valid updates its cached object.
        if let Some(cached) = self.cached.clone()
            && cached
                .spec
                .as_ref()
                .and_then(|s| s.holder_identity.as_deref())
                == Some(self.identity.as_str())
            && self.valid_at(now)
        {
            let mut lease = cached;
            lease.spec = Some(self.record(lease.spec.as_ref()));
            if let Ok(Some(l)) = self
                .timed(self.api.replace(&self.name, &PostParams::default(), &lease))
                .await
            {
                self.written(l, now);
                return Ok(true);
            }
            // Fall back to Get + Update (a 409, a timeout).
        }
        let Some(lease) = self.timed(self.api.get_opt(&self.name)).await?.flatten() else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.name.clone()),
                    owner_references: self.owner().await.map(|o| vec![o]),
                    ..Default::default()
                },
                spec: Some(self.record(None)),
            };
            return match self
                .timed(self.api.create(&PostParams::default(), &lease))
                .await
            {
                Ok(Some(l)) => {
                    self.written(l, now);
                    Ok(true)
                }
                Ok(None) => Ok(false),
                Err(e) => Err(e),
            };
        };
        let spec = lease.spec.clone().unwrap_or_default();
        self.observe(&spec, now);
        self.cached = Some(lease.clone());
        let holder = spec.holder_identity.as_deref().unwrap_or_default();
        if !holder.is_empty() && holder != self.identity && self.valid_at(now) {
            return Ok(false);
        }
        let mut next = lease;
        next.spec = Some(self.record(Some(&spec)));
        match self
            .timed(self.api.replace(&self.name, &PostParams::default(), &next))
            .await
        {
            Ok(Some(l)) => {
                self.written(l, now);
                Ok(true)
            }
            Ok(None) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Whether the observed record is still valid at `now` (`isLeaseValid`): observed time
    /// plus the record's lease duration is in the future.
    fn valid_at(&self, now: Instant) -> bool {
        let Some((raw, at)) = &self.observed else {
            return false;
        };
        let secs = serde_json::from_str::<LeaseSpec>(raw)
            .ok()
            .and_then(|s| s.lease_duration_seconds)
            .unwrap_or(0)
            .max(0) as u64;
        *at + Duration::from_secs(secs) > now
    }

    fn written(&mut self, lease: Lease, now: Instant) {
        let spec = lease.spec.clone().unwrap_or_default();
        let raw = serde_json::to_string(&spec).unwrap_or_default();
        self.observed = Some((raw, now));
        self.cached = Some(lease);
    }

    /// Acquires the Lease (retrying with jitter until `stop` resolves), then renews it until
    /// leadership is lost or `stop` resolves; `leadership` says meanwhile whether this
    /// replica leads. On `stop` while holding, the Lease is released.
    pub async fn run(
        mut self,
        leadership: std::sync::Arc<Leadership>,
        stop: impl std::future::Future<Output = ()>,
    ) -> Ended {
        tokio::pin!(stop);
        // Acquire (`acquire`: wait.JitterUntil with the retry period).
        loop {
            let started = Instant::now();
            match self.try_acquire_or_renew().await {
                Ok(true) => {
                    leadership.set_until(Some(started + self.timing.renew_deadline));
                    break;
                }
                Ok(false) => {}
                Err(e) => {
                    tracing::warn!(error = %e, lease = %self.name, "error retrieving resource lock")
                }
            }
            tokio::select! {
                _ = &mut stop => return Ended::Stopped,
                _ = tokio::time::sleep(jittered(self.timing.retry_period)) => {}
            }
        }
        tracing::info!(identity = %self.identity, lease = %self.name, "successfully acquired lease");
        // Renew (`renew`): every retry period, retry for at most the renew deadline.
        loop {
            tokio::select! {
                _ = &mut stop => {
                    leadership.set_until(None);
                    self.release().await;
                    return Ended::Stopped;
                }
                _ = tokio::time::sleep(self.timing.retry_period) => {}
            }
            let deadline = Instant::now() + self.timing.renew_deadline;
            let mut renewed = false;
            while Instant::now() < deadline {
                let started = Instant::now();
                let attempt = tokio::time::timeout_at(deadline, self.try_acquire_or_renew());
                match attempt.await {
                    Ok(Ok(true)) => {
                        leadership.set_until(Some(started + self.timing.renew_deadline));
                        renewed = true;
                        break;
                    }
                    // Another holder, or a conflict: try again until the deadline.
                    Ok(Ok(false)) => {}
                    Ok(Err(e)) => tracing::warn!(error = %e, "failed to renew lease"),
                    Err(_) => {}
                }
                tokio::select! {
                    _ = &mut stop => {
                        leadership.set_until(None);
                        self.release().await;
                        return Ended::Stopped;
                    }
                    _ = tokio::time::sleep_until(deadline.min(Instant::now() + self.timing.retry_period)) => {}
                }
            }
            if !renewed {
                leadership.set_until(None);
                tracing::error!(identity = %self.identity, lease = %self.name, "failed to renew lease: leader election lost");
                return Ended::Lost;
            }
        }
    }

    /// Gives the Lease up if this candidate holds it (`release`, R1.10).
    pub async fn release(&mut self) {
        let timeout = self.timing.renew_deadline;
        let r = tokio::time::timeout(timeout, async {
            let Some(mut lease) = self.api.get_opt(&self.name).await? else {
                return Ok::<_, kube::Error>(false);
            };
            let spec = lease.spec.clone().unwrap_or_default();
            if spec.holder_identity.as_deref() != Some(self.identity.as_str()) {
                return Ok(false);
            }
            let now = micro((self.clock)());
            lease.spec = Some(LeaseSpec {
                holder_identity: Some(String::new()),
                lease_duration_seconds: Some(1),
                acquire_time: Some(now.clone()),
                renew_time: Some(now),
                lease_transitions: spec.lease_transitions,
                ..Default::default()
            });
            self.api
                .replace(&self.name, &PostParams::default(), &lease)
                .await?;
            Ok(true)
        })
        .await;
        match r {
            Ok(Ok(true)) => {
                tracing::info!(identity = %self.identity, lease = %self.name, "released the lease")
            }
            Ok(Ok(false)) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "failed to release the lease"),
            Err(_) => tracing::warn!("failed to release the lease: no answer in time"),
        }
    }

    /// The Lease's holder as last seen.
    pub fn observed_holder(&self) -> Option<String> {
        self.cached
            .as_ref()
            .and_then(|l| l.spec.as_ref())
            .and_then(|s| s.holder_identity.clone())
            .filter(|h| !h.is_empty())
    }
}
