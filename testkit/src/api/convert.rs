//! Conversion of custom resources between the versions a CRD serves, as kube-apiserver's CR
//! codec does it (cluster.md §3; `apiextensions-apiserver pkg/apiserver/conversion/
//! webhook_converter.go`):
//!
//! - objects already in the desired version are not sent; with `strategy: None` (or no
//!   conversion) only `apiVersion` changes (`nopConverter`);
//! - with `strategy: Webhook`, one `ConversionReview` per call, POSTed over HTTPS (HTTP/1.1)
//!   to `https://<svc>.<ns>.svc:<port><path>` with TLS server name `<svc>.<ns>.svc` and the
//!   CRD's `caBundle` as the only trust (`webhookClientConfigForCRD`, R3.3); the review
//!   version is the first of `conversionReviewVersions` the server knows (R3.2);
//! - the response is checked as `getConvertedObjectsFromResponse` and
//!   `validateConvertedObject` do (R3.4), and the original `metadata` is restored, keeping
//!   only the webhook's labels and annotations (`restoreObjectMeta`);
//! - every failure is `conversion webhook for <group>/<version>, Kind=<Kind> failed: <cause>`
//!   (R3.5).
//!
//! Where a Service's pods are is not the API's business: the kubelet double answers through a
//! [`Resolver`]. Without one, or when no ready endpoint exists, the call fails as a dial would.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use base64::Engine;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName};
use serde_json::{Value, json};

use super::resources::Crd;

/// Where a Service's ready endpoint is: `(namespace, service, port)` to an address.
pub type Resolver = Arc<dyn Fn(&str, &str, u16) -> Option<SocketAddr> + Send + Sync>;

/// The webhook call's timeout (`authentication.go :: setGlobalDefaults`: 30 s).
pub const WEBHOOK_TIMEOUT: Duration = Duration::from_secs(30);

/// The review versions this API server speaks.
const KNOWN_REVIEW_VERSIONS: [&str; 2] = ["v1", "v1beta1"];

static UIDS: AtomicU64 = AtomicU64::new(1);

fn gvk(obj: &Value) -> String {
    let api = obj["apiVersion"].as_str().unwrap_or_default();
    let (g, v) = api.rsplit_once('/').unwrap_or(("", api));
    format!("{g}/{v}, Kind={}", obj["kind"].as_str().unwrap_or_default())
}

/// Converts `objects` to `desired` (`group/version`). Objects already there are returned as
/// they are.
pub async fn convert(
    crd: &Crd,
    objects: Vec<Value>,
    desired: &str,
    resolver: Option<&Resolver>,
) -> Result<Vec<Value>, String> {
    let todo: Vec<usize> = objects
        .iter()
        .enumerate()
        .filter(|(_, o)| o["apiVersion"] != desired)
        .map(|(i, _)| i)
        .collect();
    if todo.is_empty() {
        return Ok(objects);
    }
    let strategy = crd.conversion["strategy"].as_str().unwrap_or("None");
    let mut out = objects;
    if strategy != "Webhook" {
        for i in todo {
            out[i]["apiVersion"] = json!(desired);
        }
        return Ok(out);
    }
    let first = out[todo[0]].clone();
    let fail = |cause: String| format!("conversion webhook for {} failed: {cause}", gvk(&first));
    let sent: Vec<Value> = todo.iter().map(|i| out[*i].clone()).collect();
    let converted = call(crd, &sent, desired, resolver).await.map_err(fail)?;
    for (i, c) in todo.into_iter().zip(converted) {
        out[i] = c;
    }
    Ok(out)
}

async fn call(
    crd: &Crd,
    sent: &[Value],
    desired: &str,
    resolver: Option<&Resolver>,
) -> Result<Vec<Value>, String> {
    let webhook = &crd.conversion["webhook"];
    let review_versions: Vec<&str> = webhook["conversionReviewVersions"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(review_version) = review_versions
        .iter()
        .find(|v| KNOWN_REVIEW_VERSIONS.contains(v))
        .copied()
    else {
        return Err("no supported conversion review versions".into());
    };
    let cc = &webhook["clientConfig"];
    let svc = &cc["service"];
    let (ns, name) = (
        svc["namespace"].as_str().unwrap_or_default(),
        svc["name"].as_str().unwrap_or_default(),
    );
    if name.is_empty() {
        return Err("only service client configs are modelled (a url clientConfig is not)".into());
    }
    let port = svc["port"].as_u64().unwrap_or(443) as u16;
    let path = svc["path"].as_str().unwrap_or("/");
    let host = format!("{name}.{ns}.svc");
    let url = format!("https://{host}:{port}{path}?timeout=30s");
    let post = |cause: String| format!("Post \"{url}\": {cause}");
    let addr = resolver
        .and_then(|r| r(ns, name, port))
        .ok_or_else(|| post(format!("dial tcp: lookup {host}: no such host")))?;
    let uid = format!(
        "00000000-0000-4000-a000-{:012}",
        UIDS.fetch_add(1, Ordering::SeqCst)
    );
    let review = json!({
        "apiVersion": format!("apiextensions.k8s.io/{review_version}"),
        "kind": "ConversionReview",
        "request": {"uid": uid, "desiredAPIVersion": desired, "objects": sent},
    });
    // The CA bundle is the only trust (a whitespace-only bundle counts as none).
    let ca = cc["caBundle"].as_str().unwrap_or_default();
    let pem = base64::engine::general_purpose::STANDARD
        .decode(ca.trim())
        .unwrap_or_default();
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_slice_iter(&pem).flatten() {
        let _ = roots.add(c);
    }
    let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| e.to_string())?
    .with_root_certificates(roots)
    .with_no_client_auth();
    let body = tokio::time::timeout(WEBHOOK_TIMEOUT, async {
        let tcp = tokio::net::TcpStream::connect(addr)
            .await
            .map_err(|e| post(format!("dial tcp {addr}: {e}")))?;
        let server = ServerName::try_from(host.clone()).map_err(|e| post(e.to_string()))?;
        let stream = tokio_rustls::TlsConnector::from(Arc::new(tls))
            .connect(server, tcp)
            .await
            .map_err(|e| post(format!("tls: {e}")))?;
        let (mut tx, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| post(e.to_string()))?;
        tokio::spawn(conn);
        let req = http::Request::post(format!("{path}?timeout=30s"))
            .header("host", format!("{host}:{port}"))
            .header("content-type", "application/json")
            .header("accept", "application/json, */*")
            .body(Full::new(Bytes::from(review.to_string())))
            .map_err(|e| post(e.to_string()))?;
        let resp = tx
            .send_request(req)
            .await
            .map_err(|e| post(e.to_string()))?;
        let code = resp.status();
        let bytes = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| post(e.to_string()))?
            .to_bytes();
        if !code.is_success() {
            return Err(format!(
                "the server responded with status {}: {}",
                code.as_u16(),
                String::from_utf8_lossy(&bytes).trim()
            ));
        }
        Ok(bytes)
    })
    .await
    .map_err(|_| post("context deadline exceeded".into()))??;
    let resp: Value =
        serde_json::from_slice(&body).map_err(|e| format!("unmarshal ConversionReview: {e}"))?;
    let want = |o: &Value, i: usize, orig: &Value| -> Result<(), String> {
        let bad = |what: String| format!("returned invalid converted object at index {i}: {what}");
        if o["apiVersion"] != desired {
            return Err(bad(format!(
                "invalid groupVersion (expected {desired}, received {})",
                o["apiVersion"].as_str().unwrap_or_default()
            )));
        }
        if o["kind"] != orig["kind"] {
            return Err(bad(format!(
                "invalid kind (expected {}, received {})",
                orig["kind"].as_str().unwrap_or_default(),
                o["kind"].as_str().unwrap_or_default()
            )));
        }
        for f in ["name", "namespace", "uid"] {
            if o["metadata"][f] != orig["metadata"][f] {
                return Err(bad(format!("must not change metadata.{f}")));
            }
        }
        Ok(())
    };
    if review_version == "v1"
        && (resp["apiVersion"] != "apiextensions.k8s.io/v1" || resp["kind"] != "ConversionReview")
    {
        {
            return Err(format!(
                "expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got {}",
                gvk(&resp)
            ));
        }
    }
    let r = &resp["response"];
    if r.is_null() {
        return Err("no response provided".into());
    }
    if review_version == "v1" && r["uid"] != json!(uid) {
        return Err(format!(
            "expected response.uid=\"{uid}\", got \"{}\"",
            r["uid"].as_str().unwrap_or_default()
        ));
    }
    if r["result"]["status"] != "Success" {
        return Err(format!(
            "response.result.status was '{}', not 'Success'{}",
            r["result"]["status"].as_str().unwrap_or_default(),
            r["result"]["message"]
                .as_str()
                .map(|m| format!(": {m}"))
                .unwrap_or_default()
        ));
    }
    let converted = r["convertedObjects"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if converted.len() != sent.len() {
        return Err(format!(
            "returned {} objects, expected {}",
            converted.len(),
            sent.len()
        ));
    }
    let mut out = Vec::new();
    for (i, (c, orig)) in converted.into_iter().zip(sent).enumerate() {
        if review_version == "v1" {
            want(&c, i, orig)?;
        }
        // restoreObjectMeta: the original metadata, with the webhook's labels and
        // annotations.
        let mut o = c.clone();
        let mut md = orig["metadata"].clone();
        for f in ["labels", "annotations"] {
            match c["metadata"].get(f) {
                Some(v) if !v.is_null() => md[f] = v.clone(),
                _ => {
                    if let Some(m) = md.as_object_mut() {
                        m.remove(f);
                    }
                }
            }
        }
        o["metadata"] = md;
        out.push(o);
    }
    Ok(out)
}
