//! Leader election with a `coordination.k8s.io/v1` Lease, so that two replicas never both
//! act: a replica acts only while it holds the Lease, renews it every `duration / 3`, and
//! takes it over only once the holder has not renewed it for `duration`. Every write is an
//! update guarded by the Lease's resourceVersion, so two candidates cannot both win.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::Client;
use kube::api::{Api, PostParams};

/// A candidate for the Lease.
pub struct Elector {
    api: Api<Lease>,
    name: String,
    identity: String,
    duration: Duration,
    clock: crate::Clock,
}

fn micro(t: jiff::Timestamp) -> MicroTime {
    MicroTime(crate::to_k8s_time(t))
}

impl Elector {
    /// A candidate `identity` for Lease `namespace/name`.
    pub fn new(
        client: Client,
        namespace: &str,
        name: &str,
        identity: &str,
        duration: Duration,
        clock: crate::Clock,
    ) -> Self {
        Elector {
            api: Api::namespaced(client, namespace),
            name: name.into(),
            identity: identity.into(),
            duration,
            clock,
        }
    }

    /// One round: acquires, renews or respects the Lease; returns whether this candidate holds
    /// it now.
    pub async fn try_acquire(&self) -> Result<bool, kube::Error> {
        let now = (self.clock)();
        let secs = self.duration.as_secs() as i32;
        let Some(mut lease) = self.api.get_opt(&self.name).await? else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.name.clone()),
                    ..Default::default()
                },
                spec: Some(LeaseSpec {
                    holder_identity: Some(self.identity.clone()),
                    lease_duration_seconds: Some(secs),
                    acquire_time: Some(micro(now)),
                    renew_time: Some(micro(now)),
                    lease_transitions: Some(0),
                    ..Default::default()
                }),
            };
            return match self.api.create(&PostParams::default(), &lease).await {
                Ok(_) => Ok(true),
                Err(kube::Error::Api(s)) if s.code == 409 => Ok(false),
                Err(e) => Err(e),
            };
        };
        let spec = lease.spec.get_or_insert_with(Default::default);
        let mine = spec.holder_identity.as_deref() == Some(self.identity.as_str());
        let renewed = spec
            .renew_time
            .as_ref()
            .map(|t| jiff::Timestamp::from_nanosecond(t.0.as_nanosecond()).unwrap_or_default());
        let held_for = spec.lease_duration_seconds.unwrap_or(secs).max(1) as i64;
        let expired = renewed
            .is_none_or(|r| now.duration_since(r) >= jiff::SignedDuration::from_secs(held_for));
        if !mine && !expired {
            return Ok(false);
        }
        if !mine {
            spec.holder_identity = Some(self.identity.clone());
            spec.acquire_time = Some(micro(now));
            spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0) + 1);
        }
        spec.renew_time = Some(micro(now));
        spec.lease_duration_seconds = Some(secs);
        match self
            .api
            .replace(&self.name, &PostParams::default(), &lease)
            .await
        {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(s)) if s.code == 409 => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Waits until this candidate holds the Lease, then keeps renewing it in the background,
    /// clearing `leader` (and stopping) when a renewal fails or another holder took over.
    pub async fn lead(self, leader: Arc<AtomicBool>) {
        let period = self.duration / 3;
        loop {
            match self.try_acquire().await {
                Ok(true) => break,
                Ok(false) => {}
                Err(e) => tracing::warn!(error = %e, "lease not acquired"),
            }
            tokio::time::sleep(period).await;
        }
        tracing::info!(identity = %self.identity, lease = %self.name, "leading");
        leader.store(true, Ordering::SeqCst);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(period).await;
                match self.try_acquire().await {
                    Ok(true) => {}
                    other => {
                        tracing::error!(result = ?other.map_err(|e| e.to_string()), "lost the lease; stopping");
                        leader.store(false, Ordering::SeqCst);
                        return;
                    }
                }
            }
        });
    }
}
