//! The cluster's version as the gate reads it from `/version`: the patch is kept (defect E:
//! it was `major.minor.0`, so a CSV needing 1.30.2 on a 1.30.2 cluster was held, GATE013).

use serde_json::json;

fn info(major: &str, minor: &str, git: &str) -> serde_json::Value {
    json!({"major": major, "minor": minor, "gitVersion": git, "gitCommit": "0", "gitTreeState": "clean",
           "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.24", "compiler": "gc", "platform": "linux/amd64"})
}

#[tokio::test]
async fn the_patch_comes_from_git_version_on_real_distributions() {
    // /version bodies as k3s, GKE, EKS and upstream write them.
    for (major, minor, git, want) in [
        ("1", "30", "v1.30.2+k3s1", "1.30.2"),
        ("1", "31", "v1.31.4-gke.1000", "1.31.4"),
        ("1", "29+", "v1.29.10-eks-7f9249a", "1.29.10"),
        ("1", "33", "v1.33.0", "1.33.0"),
        // No usable gitVersion: major.minor.0, a `+` dropped.
        ("1", "28+", "", "1.28.0"),
    ] {
        let api = olmctl_testkit::api::ApiServer::new();
        api.set_version(info(major, minor, git));
        let v = olmctl_operator::kube_version(&api.client()).await;
        assert_eq!(v.map(|v| v.to_string()).as_deref(), Some(want), "{git}");
    }
}
