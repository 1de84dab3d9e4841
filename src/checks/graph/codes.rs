//! Upgrade-graph lint codes. Codes are never renumbered; retired codes are not reused.

use crate::diag::Severity::{Error, Warning};

codes! {
    CYCLE = "GRAPH001", Error, "The upgrade edges form a cycle, or an entry replaces itself.";
    HEADS = "GRAPH002", Error, "A channel has several heads; OLM v0 needs one replacement chain.";
    STRANDED = "GRAPH003", Error, "An entry is neither on the replaces chain from the head nor skipped.";
    SKIPPED_IN_CHAIN = "GRAPH004", Warning, "Users rely on a skipped entry's edges: OLM v0 never lands on a skipped entry and ignores its replaces, skips and skipRange, so the users they name never reach the head.";
    BAD_SKIP_RANGE = "GRAPH005", Error, "A skipRange does not parse; OLM v0 silently ignores it.";
    SKIP_RANGE_ABOVE = "GRAPH006", Warning, "A skipRange admits versions at or above the bundle's own version.";
    DOWNGRADE = "GRAPH007", Warning, "A replaces or skips edge goes to a lower version (OLM v1 never takes it).";
    V0_STUCK = "GRAPH008", Error, "From this entry OLM v0 never reaches the channel head: users stay behind forever.";
    V1_STUCK = "GRAPH009", Warning, "From this entry OLM v1 stops before the channel head (downgrade edges, pre-release heads).";
    CHANNEL_SWITCH_TRAP = "GRAPH010", Warning, "Upgrading a bundle in one channel lands on a bundle from which another channel holding the same bundle cannot reach its head: switching channels strands users.";
    DEFAULT_CHANNEL_MISSING = "GRAPH011", Error, "The package's default channel does not exist.";
}
