//! The budgets that bound decoding unpacked-bundle ConfigMaps, per file, per ConfigMap and per
//! evaluation ([`InflateBudget`]); why these sizes: [`super::manifests`].

use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes one file of an unpacked-bundle ConfigMap may inflate to.
pub const MAX_FILE_INFLATED: u64 = 8 << 20;
/// Bytes all files of one ConfigMap may inflate to together.
pub const MAX_CONFIGMAP_INFLATED: u64 = 16 << 20;
/// Parsed nodes (every map, list and scalar) of one ConfigMap's files together.
pub const MAX_CONFIGMAP_NODES: u64 = 1_000_000;
/// Bytes all ConfigMaps of one evaluation (one [`Objects`](super::objects::Objects)) may
/// inflate to together.
pub const MAX_SNAPSHOT_INFLATED: u64 = 48 << 20;

// One ConfigMap fits an evaluation.
const _: () = assert!(MAX_SNAPSHOT_INFLATED >= MAX_CONFIGMAP_INFLATED);

/// What is left of the inflate budget of one evaluation ([`MAX_SNAPSHOT_INFLATED`]); shared
/// by the clones of an [`Objects`](super::objects::Objects).
#[derive(Debug)]
pub struct InflateBudget {
    left: AtomicU64,
}

impl Default for InflateBudget {
    fn default() -> Self {
        InflateBudget::new(MAX_SNAPSHOT_INFLATED)
    }
}

impl InflateBudget {
    /// A budget of `bytes`.
    pub fn new(bytes: u64) -> Self {
        InflateBudget {
            left: AtomicU64::new(bytes),
        }
    }

    /// Bytes left.
    pub fn left(&self) -> u64 {
        self.left.load(Ordering::Acquire)
    }

    /// Takes `bytes`, or nothing and false when fewer are left.
    pub(super) fn take(&self, bytes: u64) -> bool {
        self.left
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |l| {
                l.checked_sub(bytes)
            })
            .is_ok()
    }
}
