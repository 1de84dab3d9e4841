#!/usr/bin/env bash
# The main job from README.md: build olmctl, then validate, list, lint and graph the repo's own catalog/
# (olmctl-operator's, rendered from operator/catalog-template.yaml), build its catalog image, check
# the operator's packaging, and run the upgrade gate on an example; also the graph page and a
# start of catalog serve on it.
set -euo pipefail
cd "$(dirname "$0")/.."
# One release build of the whole workspace, static (scripts/release.sh: olmctl and
# olmctl-operator for x86_64-unknown-linux-musl, their tarballs and SHA256SUMS in target/dist,
# and both images, olmctl's and the operator's, into the OCI layouts target/olmctl-image and
# target/operator-image); everything below runs those binaries.
bash scripts/release.sh
BIN=target/x86_64-unknown-linux-musl/release
"$BIN"/olmctl catalog validate catalog/
"$BIN"/olmctl catalog ls catalog/
"$BIN"/olmctl catalog lint catalog/
"$BIN"/olmctl catalog graph catalog/ --format text
# The upgrade graph as a page a person can open (self-contained, no network).
"$BIN"/olmctl catalog graph catalog/ --format html --out target/catalog-report.html
# What the repo's catalog serves to OLM: start the registry API on it, wait for SERVING, stop it.
"$BIN"/olmctl catalog serve catalog/ --port 50151 & serve_pid=$!
for _ in $(seq 1 100); do
  if (exec 3<>/dev/tcp/127.0.0.1/50151) 2>/dev/null; then break; fi
  sleep 0.1
done
kill -TERM "$serve_pid"
wait "$serve_pid"
# Build the catalog image daemonless into an OCI layout (push with --tag REF and no --oci-layout).
rm -rf target/catalog-image
"$BIN"/olmctl catalog push catalog/ --tag localhost/olmctl/example-catalog:dev \
  --oci-layout target/catalog-image
# The upgrade gate on the fixtures' example cluster state: the sample policy holds the plan
# (its CRD changes are unsafe), exit 1; the operator's CRD in operator/config/ is current.
"$BIN"/olmctl-operator crd | diff -u operator/config/crd.yaml -
# The operator's own packaging: bundle/, operator/history/ and catalog/ regenerate byte-identically,
# every bundle validates cleanly, every catalog edge passes check catalog.
OLMCTL="$BIN/olmctl" OPERATOR="$BIN/olmctl-operator" bash scripts/packaging.sh
set +e
"$BIN"/olmctl gate evaluate --policy operator/config/samples/upgradepolicy.yaml \
  -f ../shared/fixtures/olm/objects --now 2026-09-20T01:00:00Z --kube-version 1.30
rc=$?
set -e
if [ "$rc" != 1 ]; then echo "gate evaluate: expected exit 1 (held), got $rc" >&2; exit 1; fi
