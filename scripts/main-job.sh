#!/usr/bin/env bash
# The main job from README.md: build olmctl, then validate, list, lint and graph the repo's own catalog/
# (olmctl-operator's, rendered from operator/catalog-template.yaml), build its catalog image, check
# the operator's packaging, and run the upgrade gate on an example; also the graph page and a
# start of catalog serve on it.
set -euo pipefail
cd "$(dirname "$0")/.."
# One release build of the whole workspace (the olmctl and olmctl-operator binaries): the same
# invocation, and so the same feature set, as `cargo build --release --workspace`, so neither
# builds anything the other did not.
build_start=$(date +%s)
cargo build --locked --release --workspace
echo "main job: release build took $(( $(date +%s) - build_start )) s" >&2
ls -l target/release/olmctl target/release/olmctl-operator | awk '{print "main job: " $NF ": " $5 " bytes"}' >&2
./target/release/olmctl catalog validate catalog/
./target/release/olmctl catalog ls catalog/
./target/release/olmctl catalog lint catalog/
./target/release/olmctl catalog graph catalog/ --format text
# The upgrade graph as a page a person can open (self-contained, no network).
./target/release/olmctl catalog graph catalog/ --format html --out target/catalog-report.html
# What the repo's catalog serves to OLM: start the registry API on it, wait for SERVING, stop it.
./target/release/olmctl catalog serve catalog/ --port 50151 & serve_pid=$!
for _ in $(seq 1 100); do
  if (exec 3<>/dev/tcp/127.0.0.1/50151) 2>/dev/null; then break; fi
  sleep 0.1
done
kill -TERM "$serve_pid"
wait "$serve_pid"
# Build the catalog image daemonless into an OCI layout (push with --tag REF and no --oci-layout).
rm -rf target/catalog-image
./target/release/olmctl catalog push catalog/ --tag localhost/olmctl/example-catalog:dev \
  --oci-layout target/catalog-image
# The upgrade gate on the fixtures' example cluster state: the sample policy holds the plan
# (its CRD changes are unsafe), exit 1; the operator's CRD in operator/config/ is current.
./target/release/olmctl-operator crd | diff -u operator/config/crd.yaml -
# The operator's own packaging: bundle/, operator/history/ and catalog/ regenerate byte-identically,
# every bundle validates cleanly, every catalog edge passes check catalog.
bash scripts/packaging.sh
set +e
./target/release/olmctl gate evaluate --policy operator/config/samples/upgradepolicy.yaml \
  -f ../shared/fixtures/olm/objects --now 2026-09-20T01:00:00Z --kube-version 1.30
rc=$?
set -e
if [ "$rc" != 1 ]; then echo "gate evaluate: expected exit 1 (held), got $rc" >&2; exit 1; fi
# The operator image, daemonless, into the OCI layout target/operator-image: the binary on the
# C runtime it links and CA certificates, from Debian packages (apt-get download, dpkg-deb -x),
# run as 65532; the package versions are printed.
bash scripts/operator-image.sh
