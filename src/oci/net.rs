//! HTTP for pulls and for the token flow, with every limit applied while the body streams.
//!
//! oci-client reads whole answers into memory before looking at them (manifests, token and
//! error answers), so a registry streaming an endless body would be buffered without limit.
//! Every request (the `/v2/` ping, the Bearer token flow, pulls of manifests, indexes,
//! configs and layers, blob checks, uploads, mounts and manifest pushes) is therefore made
//! here with reqwest (the client oci-client uses; oci-client still parses references).
//! Success bodies are read only by pulls, each up to its limit; error bodies up to
//! [`MAX_ERROR_BODY`]. Time is bounded by the client's connect and idle timeouts here and by
//! the caller's per-attempt `--timeout` ([`super::registry`]).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use oci_client::Reference;
use oci_client::client::ClientProtocol;
use reqwest::Method;
use reqwest::header::{ACCEPT, CONTENT_LENGTH, CONTENT_TYPE, LOCATION, WWW_AUTHENTICATE};
use serde_json::Value;

use super::auth::Credential;

/// Connecting (TCP and TLS) to a registry or token server may take this long.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// A server that sends nothing (no answer, no body bytes) for this long has stalled.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// Largest manifest or index read: the distribution registry refuses to store larger ones.
pub const MAX_MANIFEST: u64 = 4 << 20;
/// Largest token answer read: tokens are JWTs of a few KiB.
pub const MAX_TOKEN: u64 = 1 << 20;
/// Largest part of an error answer read: an OCI error envelope fits, the rest is dropped.
pub const MAX_ERROR_BODY: u64 = 64 << 10;
/// Largest buffer reserved from a declared size before any byte arrived (a lying descriptor
/// or Content-Length must not allocate gigabytes up front).
const MAX_PREALLOC: u64 = 64 << 20;
/// Token lifetime when the token server does not say (the distribution spec's default).
const DEFAULT_TOKEN_TTL: Duration = Duration::from_secs(60);

/// Why a registry operation failed.
#[derive(Debug)]
pub enum Failure {
    /// A transport error: connecting, TLS, a dropped connection, a stalled answer.
    Http(reqwest::Error),
    /// The registry answered with an error status.
    Status {
        /// HTTP status.
        code: u16,
        /// The URL, its query redacted.
        url: String,
        /// The error codes and messages of the answer (or its first line), printable.
        message: String,
        /// The answer asked to slow down (TOOMANYREQUESTS).
        too_many: bool,
    },
    /// The token server refused the credentials.
    Auth(String),
    /// An attempt took longer than `--timeout`.
    Timeout,
    /// An answer passed its size limit (the message says which).
    TooLarge(String),
    /// Anything else; final.
    Other(String),
}

impl Failure {
    /// Whether retrying may help: transport errors, timeouts, 5xx and 429.
    pub fn transient(&self) -> bool {
        match self {
            Failure::Http(e) => !e.is_builder() && !e.is_redirect() && !e.is_decode(),
            Failure::Status { code, too_many, .. } => *code >= 500 || *code == 429 || *too_many,
            Failure::Timeout => true,
            Failure::Auth(_) | Failure::TooLarge(_) | Failure::Other(_) => false,
        }
    }

    /// Whether this is a timeout (of the attempt, of connecting or of an idle answer).
    pub fn is_timeout(&self) -> bool {
        match self {
            Failure::Timeout => true,
            Failure::Http(e) => e.is_timeout(),
            _ => false,
        }
    }
}

/// What `/v2/` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Challenge {
    /// Nothing: anonymous access.
    None,
    /// HTTP Basic credentials on every request.
    Basic,
    /// A token from `realm` (with `service`), sent as `Bearer`.
    Bearer {
        /// Token server URL.
        realm: String,
        /// The `service` parameter to pass.
        service: Option<String>,
    },
}

/// How one request is authorized.
#[derive(Clone)]
pub enum Authz {
    /// Anonymous.
    None,
    /// HTTP Basic.
    Basic(String, String),
    /// A Bearer token.
    Bearer(String),
}

/// Cached tokens: (registry, repository, push) to the token and when to renew it.
type Tokens = HashMap<(String, String, bool), (String, Instant)>;

/// The HTTP side of the registry client (`registry::Registry` drives it).
pub struct Net {
    http: Result<reqwest::Client, String>,
    protocol: ClientProtocol,
    challenges: Mutex<HashMap<String, Challenge>>,
    tokens: Mutex<Tokens>,
}

impl Net {
    /// A client for `protocol`; `timeout` (`--timeout`) caps the connect and idle timeouts.
    pub fn new(protocol: ClientProtocol, insecure: bool, timeout: Duration) -> Net {
        let http = reqwest::Client::builder()
            .danger_accept_invalid_certs(insecure)
            .connect_timeout(CONNECT_TIMEOUT.min(timeout))
            .read_timeout(IDLE_TIMEOUT.min(timeout))
            .user_agent(concat!("olmctl/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("cannot set up the HTTP client: {e}"));
        Net {
            http,
            protocol,
            challenges: Mutex::new(HashMap::new()),
            tokens: Mutex::new(HashMap::new()),
        }
    }

    fn http(&self) -> Result<&reqwest::Client, Failure> {
        self.http.as_ref().map_err(|e| Failure::Other(e.clone()))
    }

    /// `http` or `https` for `registry`.
    pub fn scheme(&self, registry: &str) -> &'static str {
        match &self.protocol {
            ClientProtocol::Http => "http",
            ClientProtocol::HttpsExcept(lo) if lo.iter().any(|l| l == registry) => "http",
            _ => "https",
        }
    }

    /// `<scheme>://<registry>/v2/<repository>/<tail>`.
    pub fn url(&self, r: &Reference, tail: &str) -> String {
        let reg = r.resolve_registry();
        let ns = r
            .namespace()
            .map(|n| format!("?ns={n}"))
            .unwrap_or_default();
        format!(
            "{}://{reg}/v2/{}/{tail}{ns}",
            self.scheme(reg),
            r.repository()
        )
    }

    /// What `registry` asks for, from its `/v2/` answer (asked once per registry).
    pub async fn challenge(&self, registry: &str) -> Result<Challenge, Failure> {
        if let Some(c) = self
            .challenges
            .lock()
            .ok()
            .and_then(|m| m.get(registry).cloned())
        {
            return Ok(c);
        }
        let url = format!("{}://{registry}/v2/", self.scheme(registry));
        let resp = self.http()?.get(&url).send().await.map_err(Failure::Http)?;
        let found: Vec<Challenge> = resp
            .headers()
            .get_all(WWW_AUTHENTICATE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .map(parse_challenge)
            .collect();
        let c = found
            .iter()
            .find(|c| matches!(c, Challenge::Bearer { .. }))
            .or_else(|| found.iter().find(|c| **c == Challenge::Basic))
            .cloned()
            .unwrap_or(Challenge::None);
        let s = resp.status();
        if c == Challenge::None && (s.is_server_error() || s.as_u16() == 429) {
            return Err(status_failure(resp).await);
        }
        if let Ok(mut m) = self.challenges.lock() {
            m.insert(registry.to_string(), c.clone());
        }
        Ok(c)
    }

    /// The authorization for pulling (or, with `push`, pushing to) `r`'s repository: asks
    /// `/v2/` once per registry and fetches (and caches) a token when it wants one.
    pub async fn authorize(
        &self,
        r: &Reference,
        push: bool,
        cred: &Credential,
    ) -> Result<Authz, Failure> {
        let reg = r.resolve_registry();
        let (realm, service) = match self.challenge(reg).await? {
            Challenge::None => return Ok(Authz::None),
            Challenge::Basic => {
                return Ok(match cred {
                    Credential::Basic { username, password } => {
                        Authz::Basic(username.clone(), password.clone())
                    }
                    Credential::Anonymous => Authz::None,
                });
            }
            Challenge::Bearer { realm, service } => (realm, service),
        };
        let key = (reg.to_string(), r.repository().to_string(), push);
        let cached = self.tokens.lock().ok().and_then(|m| m.get(&key).cloned());
        if let Some((t, until)) = cached
            && Instant::now() < until
        {
            return Ok(Authz::Bearer(t));
        }
        let scope = format!(
            "repository:{}:{}",
            r.repository(),
            if push { "pull,push" } else { "pull" }
        );
        let (token, ttl) = self
            .token(reg, &realm, service.as_deref(), &scope, cred)
            .await?;
        // Renewed a little before it expires, so that it does not expire mid-request.
        let until = Instant::now() + ttl.saturating_sub(ttl / 6);
        if let Ok(mut m) = self.tokens.lock() {
            m.insert(key, (token.clone(), until));
        }
        Ok(Authz::Bearer(token))
    }

    /// Fetches a token from `realm`; the answer is read up to [`MAX_TOKEN`].
    async fn token(
        &self,
        registry: &str,
        realm: &str,
        service: Option<&str>,
        scope: &str,
        cred: &Credential,
    ) -> Result<(String, Duration), Failure> {
        let mut url = reqwest::Url::parse(realm)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https"))
            .ok_or_else(|| {
                Failure::Other(format!(
                    "the registry names an invalid token server {:?}",
                    printable(realm.as_bytes(), 200)
                ))
            })?;
        url.query_pairs_mut().append_pair("scope", scope);
        if let Some(s) = service {
            url.query_pairs_mut().append_pair("service", s);
        }
        let mut req = self.http()?.get(url.clone());
        // Credentials never go in the clear to the token server of an HTTPS registry.
        if let Credential::Basic { username, password } = cred
            && (url.scheme() == "https" || self.scheme(registry) == "http")
        {
            req = req.basic_auth(username, Some(password));
        }
        let resp = req.send().await.map_err(Failure::Http)?;
        let s = resp.status().as_u16();
        if s == 401 || s == 403 {
            let body = read_prefix(resp, MAX_ERROR_BODY).await;
            return Err(Failure::Auth(format!(
                "the token server answered {s}: {}",
                error_message(&body).0
            )));
        }
        if !resp.status().is_success() {
            return Err(status_failure(resp).await);
        }
        let body = read_limited(resp, MAX_TOKEN, || {
            format!(
                "the token server's answer is larger than {}; refused",
                human_size(MAX_TOKEN)
            )
        })
        .await?;
        let v: Value = serde_json::from_slice(&body)
            .map_err(|e| Failure::Other(format!("the token server's answer is not JSON: {e}")))?;
        let token = ["token", "access_token"]
            .iter()
            .find_map(|k| v.get(k).and_then(Value::as_str))
            .filter(|t| !t.is_empty())
            .ok_or_else(|| Failure::Other("the token server's answer holds no token".into()))?;
        let ttl = v
            .get("expires_in")
            .and_then(Value::as_u64)
            .map(Duration::from_secs)
            .unwrap_or(DEFAULT_TOKEN_TTL);
        Ok((token.to_string(), ttl))
    }

    /// A request to `url`, authorized with `authz` only when `url` is on `r`'s registry
    /// (an upload location may point at other storage; credentials never follow it).
    fn request(
        &self,
        method: Method,
        url: &str,
        r: &Reference,
        authz: &Authz,
    ) -> Result<reqwest::RequestBuilder, Failure> {
        let target = reqwest::Url::parse(url)
            .map_err(|e| Failure::Other(format!("invalid URL {:?}: {e}", redact(url))))?;
        let reg = r.resolve_registry();
        let home = reqwest::Url::parse(&format!("{}://{reg}/", self.scheme(reg))).ok();
        let same = home.is_some_and(|h| {
            h.scheme() == target.scheme()
                && h.host_str() == target.host_str()
                && h.port_or_known_default() == target.port_or_known_default()
        });
        let req = self.http()?.request(method, target);
        Ok(match authz {
            _ if !same => req,
            Authz::None => req,
            Authz::Basic(u, p) => req.basic_auth(u, Some(p)),
            Authz::Bearer(t) => req.bearer_auth(t),
        })
    }

    /// GET `url` of `r`'s registry; an error status is a [`Failure::Status`]. The body of a
    /// success is left to the caller.
    pub async fn get(
        &self,
        r: &Reference,
        url: &str,
        accept: Option<&str>,
        authz: &Authz,
    ) -> Result<reqwest::Response, Failure> {
        let mut req = self.request(Method::GET, url, r, authz)?;
        if let Some(a) = accept {
            req = req.header(ACCEPT, a);
        }
        send(req).await
    }

    /// Whether `r`'s repository has blob `digest`.
    pub async fn blob_exists(
        &self,
        r: &Reference,
        digest: &str,
        authz: &Authz,
    ) -> Result<bool, Failure> {
        let url = self.url(r, &format!("blobs/{digest}"));
        let resp = self
            .request(Method::HEAD, &url, r, authz)?
            .send()
            .await
            .map_err(Failure::Http)?;
        match resp.status().as_u16() {
            200..=299 => Ok(true),
            404 => Ok(false),
            _ => Err(status_failure(resp).await),
        }
    }

    /// Starts an upload session in `r`'s repository, or with `mount` (digest, repository)
    /// mounts that blob: the session's URL, `None` when the blob was mounted.
    async fn start_upload(
        &self,
        r: &Reference,
        authz: &Authz,
        mount: Option<(&str, &str)>,
    ) -> Result<Option<String>, Failure> {
        let url = self.url(r, "blobs/uploads/");
        let mut url = reqwest::Url::parse(&url)
            .map_err(|e| Failure::Other(format!("invalid URL {url:?}: {e}")))?;
        if let Some((digest, from)) = mount {
            url.query_pairs_mut()
                .append_pair("mount", digest)
                .append_pair("from", from);
        }
        let req = self.request(Method::POST, url.as_str(), r, authz)?;
        let resp = send(req.header(CONTENT_LENGTH, 0)).await?;
        if mount.is_some() && resp.status().as_u16() == 201 {
            return Ok(None);
        }
        let location = resp
            .headers()
            .get(LOCATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|l| url.join(l).ok())
            .ok_or_else(|| {
                Failure::Other(format!(
                    "{} answered {} without an upload location",
                    redact(url.as_str()),
                    resp.status().as_u16()
                ))
            })?;
        Ok(Some(location.to_string()))
    }

    /// Mounts blob `digest` of repository `from` into `r`'s repository; false when the
    /// registry would not.
    pub async fn mount(
        &self,
        r: &Reference,
        digest: &str,
        from: &str,
        authz: &Authz,
    ) -> Result<bool, Failure> {
        Ok(self
            .start_upload(r, authz, Some((digest, from)))
            .await?
            .is_none())
    }

    /// Uploads blob `digest` of `len` bytes (POST, then one PUT of the whole body).
    pub async fn upload(
        &self,
        r: &Reference,
        digest: &str,
        body: reqwest::Body,
        len: u64,
        authz: &Authz,
    ) -> Result<(), Failure> {
        let location = self
            .start_upload(r, authz, None)
            .await?
            .ok_or_else(|| Failure::Other("no upload session".into()))?;
        let mut url = reqwest::Url::parse(&location)
            .map_err(|e| Failure::Other(format!("invalid upload location: {e}")))?;
        url.query_pairs_mut().append_pair("digest", digest);
        let req = self.request(Method::PUT, url.as_str(), r, authz)?;
        send(
            req.header(CONTENT_TYPE, "application/octet-stream")
                .header(CONTENT_LENGTH, len)
                .body(body),
        )
        .await?;
        Ok(())
    }

    /// Puts a manifest of media type `mt` as `r` (its tag or digest).
    pub async fn put_manifest(
        &self,
        r: &Reference,
        bytes: bytes::Bytes,
        mt: &str,
        authz: &Authz,
    ) -> Result<(), Failure> {
        let reference = r.digest().or(r.tag()).unwrap_or("latest");
        let url = self.url(r, &format!("manifests/{reference}"));
        let req = self.request(Method::PUT, &url, r, authz)?;
        send(req.header(CONTENT_TYPE, mt).body(bytes)).await?;
        Ok(())
    }
}

/// Sends `req`; an error status is a [`Failure::Status`] (its body read up to
/// [`MAX_ERROR_BODY`]). The body of a success is left to the caller.
async fn send(req: reqwest::RequestBuilder) -> Result<reqwest::Response, Failure> {
    let resp = req.send().await.map_err(Failure::Http)?;
    if resp.status().is_success() {
        Ok(resp)
    } else {
        Err(status_failure(resp).await)
    }
}

/// Reads a body of at most `limit` bytes; more is [`Failure::TooLarge`] with `msg`, found as
/// soon as the declared length or the bytes received pass the limit.
pub async fn read_limited(
    mut resp: reqwest::Response,
    limit: u64,
    msg: impl Fn() -> String,
) -> Result<Vec<u8>, Failure> {
    let declared = resp.content_length().unwrap_or(0);
    if declared > limit {
        return Err(Failure::TooLarge(msg()));
    }
    let mut buf = Vec::with_capacity(declared.min(MAX_PREALLOC) as usize);
    while let Some(chunk) = resp.chunk().await.map_err(Failure::Http)? {
        if buf.len() as u64 + chunk.len() as u64 > limit {
            return Err(Failure::TooLarge(msg()));
        }
        buf.extend_from_slice(&chunk);
    }
    Ok(buf)
}

/// The first `limit` bytes of a body (or fewer when it fails); the rest is never read.
async fn read_prefix(mut resp: reqwest::Response, limit: u64) -> Vec<u8> {
    let mut buf = Vec::new();
    while (buf.len() as u64) < limit {
        match resp.chunk().await {
            Ok(Some(c)) => {
                let room = (limit as usize).saturating_sub(buf.len());
                buf.extend_from_slice(&c[..c.len().min(room)]);
            }
            _ => break,
        }
    }
    buf
}

/// An error answer as a [`Failure::Status`].
async fn status_failure(resp: reqwest::Response) -> Failure {
    let code = resp.status().as_u16();
    let url = redact(resp.url().as_str());
    let body = read_prefix(resp, MAX_ERROR_BODY).await;
    let (message, too_many) = error_message(&body);
    Failure::Status {
        code,
        url,
        message,
        too_many,
    }
}

/// The codes and messages of an OCI error envelope (and whether it says TOOMANYREQUESTS),
/// else the start of the body; printable either way.
fn error_message(body: &[u8]) -> (String, bool) {
    let errors = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v.get("errors").and_then(Value::as_array).cloned());
    match errors {
        Some(errs) if !errs.is_empty() => {
            let s = |e: &Value, k: &str| e.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            let too_many = errs
                .iter()
                .any(|e| s(e, "code").eq_ignore_ascii_case("toomanyrequests"));
            let msgs: Vec<String> = errs
                .iter()
                .map(|e| format!("{}: {}", s(e, "code"), s(e, "message")))
                .collect();
            (printable(msgs.join("; ").as_bytes(), 300), too_many)
        }
        _ => (printable(body, 300), false),
    }
}

/// At most `max` characters of `bytes`, control characters (terminal escapes from a hostile
/// server) replaced by spaces.
pub fn printable(bytes: &[u8], max: usize) -> String {
    String::from_utf8_lossy(bytes)
        .chars()
        .take(max)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .trim()
        .to_string()
}

/// `4 MiB`, `1 GiB`, else bytes.
pub fn human_size(n: u64) -> String {
    match n {
        n if n >= 1 << 30 && n % (1 << 30) == 0 => format!("{} GiB", n >> 30),
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{} KiB", n >> 10),
        n => format!("{n} bytes"),
    }
}

/// `500ms`, `30s`, `10m`, `1h`.
pub fn human_duration(d: Duration) -> String {
    let ms = d.as_millis();
    match ms {
        ms if ms % 3_600_000 == 0 && ms > 0 => format!("{}h", ms / 3_600_000),
        ms if ms % 60_000 == 0 && ms > 0 => format!("{}m", ms / 60_000),
        ms if ms % 1000 == 0 => format!("{}s", ms / 1000),
        ms => format!("{ms}ms"),
    }
}

/// The first challenge of a `WWW-Authenticate` value (`Bearer realm="...",service="..."` or
/// `Basic realm="..."`); anything else is [`Challenge::None`].
pub fn parse_challenge(h: &str) -> Challenge {
    let h = h.trim();
    let (scheme, rest) = h.split_once(' ').unwrap_or((h, ""));
    if scheme.eq_ignore_ascii_case("basic") {
        return Challenge::Basic;
    }
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Challenge::None;
    }
    let mut params = auth_params(rest);
    match params.remove("realm") {
        Some(realm) if !realm.is_empty() => Challenge::Bearer {
            realm,
            service: params.remove("service"),
        },
        _ => Challenge::None,
    }
}

/// `key=value` and `key="quoted \" value"` pairs, comma separated; keys lowercased.
fn auth_params(s: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let mut chars = s.chars().peekable();
    loop {
        while chars.next_if(|c| matches!(c, ' ' | '\t' | ',')).is_some() {}
        let key: String = chars.by_ref().take_while(|c| *c != '=').collect();
        if key.trim().is_empty() {
            return out;
        }
        let mut val = String::new();
        if chars.next_if_eq(&'"').is_some() {
            while let Some(c) = chars.next() {
                match c {
                    '\\' => val.extend(chars.next()),
                    '"' => break,
                    c => val.push(c),
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| *c != ',') {
                val.push(c);
            }
        }
        out.insert(key.trim().to_ascii_lowercase(), val.trim().to_string());
    }
}

/// A URL without its query: blob downloads may be redirected to presigned storage URLs whose
/// query holds a signature, which must not be printed.
pub fn redact(url: &str) -> String {
    match url.split_once('?') {
        Some((base, _)) => format!("{base}?<redacted>"),
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges() {
        assert_eq!(
            parse_challenge(
                r#"Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:a/b:pull""#
            ),
            Challenge::Bearer {
                realm: "https://auth.docker.io/token".into(),
                service: Some("registry.docker.io".into())
            }
        );
        assert_eq!(
            parse_challenge(r#"bearer Realm=https://x/t , service="a\"b""#),
            Challenge::Bearer {
                realm: "https://x/t".into(),
                service: Some("a\"b".into())
            }
        );
        assert_eq!(parse_challenge(r#"Basic realm="r""#), Challenge::Basic);
        for bad in [
            "",
            "Bearer",
            "Bearer service=x",
            "Negotiate",
            "Bearer ===,,\"",
            "Bearer realm=\"",
        ] {
            assert_eq!(parse_challenge(bad), Challenge::None, "{bad:?}");
        }
    }

    #[test]
    fn messages_are_printable_and_short() {
        let (m, many) = error_message(
            br#"{"errors":[{"code":"TOOMANYREQUESTS","message":"slow \u001b[31mdown"}]}"#,
        );
        assert!(many);
        assert_eq!(m, "TOOMANYREQUESTS: slow  [31mdown");
        let (m, _) = error_message(&[b'x'; 1000]);
        assert_eq!(m.len(), 300);
        assert_eq!(human_size(4 << 20), "4 MiB");
        assert_eq!(human_size(1000), "1000 bytes");
        assert_eq!(human_duration(Duration::from_secs(600)), "10m");
        assert_eq!(human_duration(Duration::from_millis(1500)), "1500ms");
    }
}
