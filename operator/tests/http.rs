//! The operator's HTTP endpoints over real sockets on 127.0.0.1: the conversion webhook
//! answers a `ConversionReview` (apiextensions.k8s.io/v1) over HTTPS with a test certificate,
//! and the probes serve /metrics, /healthz and /readyz.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use olmctl_operator::http::{Limits, Readiness, bind, serve_probes, serve_webhook, tls_config};
use olmctl_operator::metrics::Metrics;
use rustls_pki_types::{CertificateDer, ServerName};
use serde_json::{Value, json};
use tokio::net::TcpStream;

/// One HTTP/1.1 request over `io`; returns (status, body).
async fn send<I>(io: I, method: &str, path: &str, body: &str) -> (u16, String)
where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (mut tx, conn) = hyper::client::conn::http1::handshake(TokioIo::new(io))
        .await
        .expect("handshake");
    tokio::spawn(conn);
    let req = http::Request::builder()
        .method(method)
        .uri(path)
        .header("host", "localhost")
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("request");
    let resp = tx.send_request(req).await.expect("response");
    let status = resp.status().as_u16();
    let bytes = resp.into_body().collect().await.expect("body").to_bytes();
    (status, String::from_utf8_lossy(&bytes).into_owned())
}

#[tokio::test]
async fn the_conversion_webhook_answers_a_real_https_conversion_review() {
    let key = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).expect("cert");
    let dir = tempfile::tempdir().expect("tmp");
    std::fs::write(dir.path().join("tls.crt"), key.cert.pem()).expect("crt");
    std::fs::write(dir.path().join("tls.key"), key.signing_key.serialize_pem()).expect("key");
    let tls = tls_config(dir.path()).expect("tls config");
    let listener = bind("127.0.0.1:0".parse().expect("addr"))
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let server = tokio::spawn(serve_webhook(listener, Limits::default(), tls));

    // A client that trusts only the test certificate, as the API server trusts OLM's CA.
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from(key.cert.der().to_vec()))
        .expect("root");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let connect = || async {
        let tcp = TcpStream::connect(addr).await.expect("connect");
        connector
            .connect(ServerName::try_from("localhost").expect("name"), tcp)
            .await
            .expect("TLS handshake")
    };

    let review = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {
            "uid": "0f6c9a52-1d4e-4c5a-9a51-2f1f0b1c7e11",
            "desiredAPIVersion": "olmctl.dev/v1",
            "objects": [{
                "apiVersion": "olmctl.dev/v1alpha1", "kind": "UpgradePolicy",
                "metadata": {"name": "default", "namespace": "acme-system", "resourceVersion": "7"},
                "spec": {"maxUpgrade": "minor", "crdChecks": "Warn",
                         "maintenanceWindows": ["Sat,Sun 02:00+4h Europe/Berlin"], "soak": "24h"},
                "status": {"subscriptions": []}
            }]
        }
    });
    let (code, body) = send(connect().await, "POST", "/convert", &review.to_string()).await;
    assert_eq!(code, 200, "{body}");
    let v: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(v["apiVersion"], "apiextensions.k8s.io/v1");
    assert_eq!(v["kind"], "ConversionReview");
    assert_eq!(v["response"]["uid"], "0f6c9a52-1d4e-4c5a-9a51-2f1f0b1c7e11");
    assert_eq!(v["response"]["result"]["status"], "Success");
    assert_eq!(
        v["response"]["convertedObjects"],
        json!([{
            "apiVersion": "olmctl.dev/v1", "kind": "UpgradePolicy",
            "metadata": {"name": "default", "namespace": "acme-system", "resourceVersion": "7"},
            "spec": {"maxVersionJump": "minor", "crdSafety": "Warn",
                     "maintenanceWindows": [{"days": ["Sat", "Sun"], "start": "02:00", "duration": "4h", "timeZone": "Europe/Berlin"}],
                     "minAge": "24h"},
            "status": {"subscriptions": []}
        }])
    );
    // Back again, and the failures.
    let mut back = review.clone();
    back["request"]["desiredAPIVersion"] = json!("olmctl.dev/v1alpha1");
    back["request"]["objects"] = v["response"]["convertedObjects"].clone();
    let (_, body) = send(connect().await, "POST", "/convert", &back.to_string()).await;
    let w: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(
        w["response"]["convertedObjects"],
        review["request"]["objects"]
    );
    let (code, _) = send(connect().await, "POST", "/convert", "{not json").await;
    assert_eq!(code, 400);
    let (code, _) = send(connect().await, "GET", "/convert", "").await;
    assert_eq!(code, 404);
    // A client that does not trust the certificate gets no answer.
    let untrusting = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("versions")
    .with_root_certificates(rustls::RootCertStore::empty())
    .with_no_client_auth();
    let tcp = TcpStream::connect(addr).await.expect("connect");
    assert!(
        tokio_rustls::TlsConnector::from(Arc::new(untrusting))
            .connect(ServerName::try_from("localhost").expect("name"), tcp)
            .await
            .is_err()
    );
    server.abort();
}

#[tokio::test]
async fn probes_and_metrics() {
    let metrics = Arc::new(Metrics::default());
    let ready = Arc::new(Readiness::default());
    ready.webhook_required.store(true, Ordering::SeqCst);
    let listener = bind("127.0.0.1:0".parse().expect("addr"))
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let server = tokio::spawn(serve_probes(
        listener,
        Limits::default(),
        metrics.clone(),
        ready.clone(),
    ));
    let get = |path: &'static str| async move {
        send(
            TcpStream::connect(addr).await.expect("connect"),
            "GET",
            path,
            "",
        )
        .await
    };
    assert_eq!(get("/healthz").await.0, 200);
    // Ready means "can serve": the webhook listens and the caches are synced (leadership
    // plays no part).
    assert_eq!(
        get("/readyz").await,
        (
            503,
            "not ready: the conversion webhook is not listening yet\n".to_string()
        )
    );
    ready.webhook.store(true, Ordering::SeqCst);
    assert_eq!(
        get("/readyz").await,
        (
            503,
            "not ready: the caches have not synced yet\n".to_string()
        )
    );
    ready.synced.store(true, Ordering::SeqCst);
    assert_eq!(get("/readyz").await.0, 200);
    metrics.decision("hold", &["GATE005"]);
    let (code, body) = get("/metrics").await;
    assert_eq!(code, 200);
    assert!(
        body.contains("olmctl_gate_decisions_total{decision=\"hold\",code=\"GATE005\"} 1\n"),
        "{body}"
    );
    assert_eq!(get("/nope").await.0, 404);
    server.abort();
}

#[test]
fn a_missing_certificate_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().expect("tmp");
    let e = tls_config(dir.path()).expect_err("no files");
    assert!(e.contains("tls.crt"), "{e}");
}
