//! HTTPS for the API on loopback ([`super::ApiServer::serve_tls_on_loopback`]).
//!
//! kubectl (client-go's `clientcmd`) sends a kubeconfig's credentials only to an `https://`
//! server: `client_config.go :: DirectClientConfig.ClientConfig` reads the user's token,
//! certificates and exec plugins only `if restclient.IsConfigTransportTLS(*clientConfig)`.
//! Over plain HTTP every kubectl request reaches the API as `system:anonymous`, so a test that
//! drives kubectl as a user needs TLS.
//!
//! The chain below is a fixed test fixture for loopback only (not a secret): a CA
//! (`CN=olmctl-testkit-ca`) and the serving certificate it signed (`CN=olmctl-testkit-apiserver`,
//! SANs `IP:127.0.0.1` and `DNS:localhost`, `serverAuth`), ECDSA P-256, valid 2000-01-01 to
//! 2126-01-01, made with `openssl ca`. A kubeconfig trusts the CA through
//! `certificate-authority-data` ([`super::kubeconfig`]), so clients verify the server as they
//! would a real apiserver (no `insecure-skip-tls-verify`).

use std::sync::Arc;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

/// The CA that signed [`SERVING_CERT`] (PEM): what a kubeconfig trusts.
pub const CA_CERT: &str = "-----BEGIN CERTIFICATE-----
MIIBbDCCARKgAwIBAgICEAAwCgYIKoZIzj0EAwIwHDEaMBgGA1UEAwwRb2xtY3Rs
LXRlc3RraXQtY2EwIBcNMDAwMTAxMDAwMDAwWhgPMjEyNjAxMDEwMDAwMDBaMBwx
GjAYBgNVBAMMEW9sbWN0bC10ZXN0a2l0LWNhMFkwEwYHKoZIzj0CAQYIKoZIzj0D
AQcDQgAEZwTFaREoBAoh0YGjENq60JW7aspTNY/mTpFLc4wbXrr7SfJ6wbw+eF2n
uq853ChdNRKlrqnuwgpse7/UTmWDwKNCMEAwDwYDVR0TAQH/BAUwAwEB/zAOBgNV
HQ8BAf8EBAMCAQYwHQYDVR0OBBYEFEb/PMBmYW90ZLg2YFxz6+OU0vJgMAoGCCqG
SM49BAMCA0gAMEUCICOnL+QEGDyNoN8/fxoz6w2BTS5N1lMQvaTDYSKqczrBAiEA
1FSs3KAVmsZDpeRzRmjkOWs1GKLWGf/RqxEOlLUzXMA=
-----END CERTIFICATE-----
";

/// The API's serving certificate (PEM).
pub const SERVING_CERT: &str = "-----BEGIN CERTIFICATE-----
MIIBwzCCAWqgAwIBAgICEAEwCgYIKoZIzj0EAwIwHDEaMBgGA1UEAwwRb2xtY3Rs
LXRlc3RraXQtY2EwIBcNMDAwMTAxMDAwMDAwWhgPMjEyNjAxMDEwMDAwMDBaMCMx
ITAfBgNVBAMMGG9sbWN0bC10ZXN0a2l0LWFwaXNlcnZlcjBZMBMGByqGSM49AgEG
CCqGSM49AwEHA0IABM7QmSGG/pf9rf2uqsoNB8PNwr4ET0S/sFPTC/czS3t3Lcrz
EARVHuKBsYh1+/z+435IARZObBn6LhToZygJrGKjgZIwgY8wDAYDVR0TAQH/BAIw
ADAOBgNVHQ8BAf8EBAMCB4AwEwYDVR0lBAwwCgYIKwYBBQUHAwEwGgYDVR0RBBMw
EYcEfwAAAYIJbG9jYWxob3N0MB0GA1UdDgQWBBQramtdO0NrcwZE3CdqMTZvDORP
HDAfBgNVHSMEGDAWgBRG/zzAZmFvdGS4NmBcc+vjlNLyYDAKBggqhkjOPQQDAgNH
ADBEAiBpIj5+6/mgD/EWEfXdbgeooMkxpOc1v3Cg9EEyvO+IDwIgJzPLeOjJt41h
Z9JTARpcylGXu96xYssEq28eJ25ldRU=
-----END CERTIFICATE-----
";

/// The serving certificate's key (PKCS#8 PEM; a loopback test fixture).
const SERVING_KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgmxkg4IxfomIZKrtR
zHZoqPliA2db4YlBu3172STiDX+hRANCAATO0Jkhhv6X/a39rqrKDQfDzcK+BE9E
v7BT0wv3M0t7dy3K8xAEVR7igbGIdfv8/uN+SAEWTmwZ+i4U6GcoCaxi
-----END PRIVATE KEY-----
";

/// The TLS acceptor of the API: [`SERVING_CERT`] and its CA as the chain, HTTP/1.1 only (no
/// ALPN, so Go clients do not try HTTP/2).
pub fn acceptor() -> tokio_rustls::TlsAcceptor {
    let chain: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(SERVING_CERT.as_bytes())
            .chain(CertificateDer::pem_slice_iter(CA_CERT.as_bytes()))
            .collect::<Result<_, _>>()
            .expect("the fixture certificates parse");
    let key =
        PrivateKeyDer::from_pem_slice(SERVING_KEY.as_bytes()).expect("the fixture key parses");
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("TLS versions")
    .with_no_client_auth()
    .with_single_cert(chain, key)
    .expect("the fixture key matches its certificate");
    tokio_rustls::TlsAcceptor::from(Arc::new(config))
}
