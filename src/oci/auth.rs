//! Registry credentials: explicit flags, then the containers auth file
//! (`REGISTRY_AUTH_FILE`, `$XDG_RUNTIME_DIR/containers/auth.json`,
//! `~/.config/containers/auth.json`), then the Docker config (`$DOCKER_CONFIG/config.json` or
//! `~/.docker/config.json`), the same order podman and skopeo use.
//!
//! Inside a file, `credHelpers[<registry>]` wins, then `auths[<registry>]` (`auth` as
//! base64 `user:password`, or `username`/`password`), then `credsStore`. Helpers run as
//! `docker-credential-<name> get` with the server name on stdin.
//!
//! Credentials are never printed: errors name the file and the registry, never a secret.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

/// Credentials for one registry.
#[derive(Clone, PartialEq, Eq)]
pub enum Credential {
    /// No credentials: anonymous access (token flows still run anonymously).
    Anonymous,
    /// User name and password (or access token used as a password).
    Basic {
        /// User name.
        username: String,
        /// Password; never printed.
        password: String,
    },
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Credential::Anonymous => write!(f, "Anonymous"),
            Credential::Basic { username, .. } => write!(f, "Basic({username:?}, <redacted>)"),
        }
    }
}

/// Where credentials were found (for messages; never the secret).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The credential.
    pub credential: Credential,
    /// `flags`, a file path, or `docker-credential-<helper>`.
    pub source: String,
}

/// The auth files to consult, in order, given the environment.
pub fn auth_files(env: &dyn Fn(&str) -> Option<String>) -> Vec<PathBuf> {
    if let Some(f) = env("REGISTRY_AUTH_FILE").filter(|s| !s.is_empty()) {
        return vec![PathBuf::from(f)];
    }
    let mut out = Vec::new();
    if let Some(x) = env("XDG_RUNTIME_DIR").filter(|s| !s.is_empty()) {
        out.push(Path::new(&x).join("containers/auth.json"));
    }
    let home = env("HOME").filter(|s| !s.is_empty());
    if let Some(h) = &home {
        out.push(Path::new(h).join(".config/containers/auth.json"));
    }
    if let Some(d) = env("DOCKER_CONFIG").filter(|s| !s.is_empty()) {
        out.push(Path::new(&d).join("config.json"));
    } else if let Some(h) = &home {
        out.push(Path::new(h).join(".docker/config.json"));
    }
    out
}

/// The host part of an auth-file key: `https://index.docker.io/v1/` → `index.docker.io`.
pub fn normalize_key(key: &str) -> String {
    let k = key
        .strip_prefix("https://")
        .or_else(|| key.strip_prefix("http://"))
        .unwrap_or(key);
    let host = k.split('/').next().unwrap_or(k);
    canonical_registry(host)
}

/// Docker Hub has several names; they share credentials.
pub fn canonical_registry(host: &str) -> String {
    match host {
        "docker.io" | "registry-1.docker.io" | "index.docker.io" => "docker.io".to_string(),
        h => h.to_string(),
    }
}

/// Finds credentials for `registry` (a host, with port when it has one) in the auth files.
pub fn lookup(registry: &str, files: &[PathBuf]) -> Result<Option<Found>, String> {
    let want = canonical_registry(registry);
    for f in files {
        // Read as every input (a FIFO or device here would hang or fill memory).
        let text = match crate::input::read(f) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(format!("{}: cannot read auth file: {e}", f.display())),
        };
        let v: Value = serde_json::from_slice(&text).map_err(|e| {
            format!(
                "{}: not valid JSON at line {} column {}; fix or remove the file",
                f.display(),
                e.line(),
                e.column()
            )
        })?;
        if let Some(helpers) = v.get("credHelpers").and_then(Value::as_object) {
            for (k, h) in helpers {
                if normalize_key(k) == want
                    && let Some(h) = h.as_str()
                {
                    return helper(h, registry).map(Some);
                }
            }
        }
        if let Some(auths) = v.get("auths").and_then(Value::as_object) {
            let mut keys: Vec<&String> = auths.keys().collect();
            keys.sort();
            for k in keys {
                if normalize_key(k) != want {
                    continue;
                }
                if let Some(c) = entry(&auths[k], f, k)? {
                    return Ok(Some(Found {
                        credential: c,
                        source: f.display().to_string(),
                    }));
                }
            }
        }
        if let Some(store) = v.get("credsStore").and_then(Value::as_str)
            && !store.is_empty()
        {
            match helper(store, registry) {
                Ok(found) => return Ok(Some(found)),
                // A store without an entry for this registry is not an error.
                Err(e) if e.contains("credentials not found") => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(None)
}

fn entry(v: &Value, file: &Path, key: &str) -> Result<Option<Credential>, String> {
    if let Some(a) = v
        .get("auth")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
    {
        let bytes = crate::encoding::decode_forgiving(a).map_err(|_| {
            format!(
                "{}: auths[{key:?}].auth is not base64; log in again",
                file.display()
            )
        })?;
        let s = String::from_utf8(bytes)
            .map_err(|_| format!("{}: auths[{key:?}].auth is not UTF-8", file.display()))?;
        let (u, p) = s.split_once(':').ok_or_else(|| {
            format!(
                "{}: auths[{key:?}].auth is not `user:password`; log in again",
                file.display()
            )
        })?;
        return Ok(Some(Credential::Basic {
            username: u.to_string(),
            password: p.to_string(),
        }));
    }
    if let (Some(u), Some(p)) = (
        v.get("username").and_then(Value::as_str),
        v.get("password").and_then(Value::as_str),
    ) {
        return Ok(Some(Credential::Basic {
            username: u.to_string(),
            password: p.to_string(),
        }));
    }
    if v.get("identitytoken").is_some() {
        return Err(format!(
            "{}: auths[{key:?}] holds only an identity token (OAuth refresh token), which olmctl cannot use; pass --username and --password-stdin",
            file.display()
        ));
    }
    Ok(None)
}

/// Runs `docker-credential-<name> get`.
fn helper(name: &str, registry: &str) -> Result<Found, String> {
    let prog = format!("docker-credential-{name}");
    let server = if canonical_registry(registry) == "docker.io" {
        "https://index.docker.io/v1/".to_string()
    } else {
        registry.to_string()
    };
    let mut child = Command::new(&prog)
        .arg("get")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{prog}: cannot run credential helper: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        use std::io::Write;
        let _ = stdin.write_all(server.as_bytes());
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("{prog}: {e}"))?;
    if !out.status.success() {
        // Helpers print "credentials not found in native keychain" on stdout.
        let msg = String::from_utf8_lossy(&out.stdout);
        let msg = msg.trim();
        return Err(format!(
            "{prog} get {server}: {}",
            if msg.is_empty() { "failed" } else { msg }
        ));
    }
    let v: Value = serde_json::from_slice(&out.stdout)
        .map_err(|_| format!("{prog} get {server}: output is not JSON"))?;
    let user = v.get("Username").and_then(Value::as_str).unwrap_or("");
    let secret = v.get("Secret").and_then(Value::as_str).unwrap_or("");
    if user == "<token>" {
        return Err(format!(
            "{prog} returned an identity token for {server}, which olmctl cannot use; pass --username and --password-stdin"
        ));
    }
    Ok(Found {
        credential: Credential::Basic {
            username: user.to_string(),
            password: secret.to_string(),
        },
        source: prog,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_order_follows_podman() {
        let env = |k: &str| match k {
            "HOME" => Some("/h".to_string()),
            "XDG_RUNTIME_DIR" => Some("/run/u".to_string()),
            _ => None,
        };
        assert_eq!(
            auth_files(&env),
            [
                PathBuf::from("/run/u/containers/auth.json"),
                PathBuf::from("/h/.config/containers/auth.json"),
                PathBuf::from("/h/.docker/config.json")
            ]
        );
        let only = |k: &str| (k == "REGISTRY_AUTH_FILE").then(|| "/a.json".to_string());
        assert_eq!(auth_files(&only), [PathBuf::from("/a.json")]);
    }

    #[test]
    fn keys_normalize_to_hosts() {
        assert_eq!(normalize_key("https://index.docker.io/v1/"), "docker.io");
        assert_eq!(normalize_key("quay.io"), "quay.io");
        assert_eq!(normalize_key("http://127.0.0.1:5000/v2/"), "127.0.0.1:5000");
    }

    #[test]
    fn reads_auth_and_username_password_entries() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("auth.json");
        // "user:pa:ss" in base64.
        std::fs::write(
            &f,
            r#"{"auths":{"https://quay.io":{"auth":"dXNlcjpwYTpzcw=="},"localhost:5000":{"username":"u","password":"p"},"other.io":{}}}"#,
        )
        .unwrap();
        let files = vec![f.clone()];
        let q = lookup("quay.io", &files).unwrap().unwrap();
        assert_eq!(
            q.credential,
            Credential::Basic {
                username: "user".into(),
                password: "pa:ss".into()
            }
        );
        assert_eq!(q.source, f.display().to_string());
        assert!(matches!(
            lookup("localhost:5000", &files)
                .unwrap()
                .unwrap()
                .credential,
            Credential::Basic { .. }
        ));
        assert_eq!(lookup("other.io", &files).unwrap(), None);
        assert_eq!(lookup("ghcr.io", &files).unwrap(), None);
        assert!(!format!("{:?}", q.credential).contains("pa:ss"));
    }

    #[test]
    fn bad_files_name_the_file_not_the_secret() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("config.json");
        std::fs::write(&f, r#"{"auths":{"quay.io":{"auth":"not base64 secret!"}}}"#).unwrap();
        let e = lookup("quay.io", std::slice::from_ref(&f)).unwrap_err();
        assert!(e.contains("config.json") && !e.contains("secret"), "{e}");
        std::fs::write(&f, "{").unwrap();
        assert!(lookup("quay.io", &[f]).unwrap_err().contains("line 1"));
    }

    #[test]
    fn missing_helper_is_an_error_naming_it() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("config.json");
        std::fs::write(&f, r#"{"credHelpers":{"quay.io":"olmctl-test-none"}}"#).unwrap();
        let e = lookup("quay.io", &[f]).unwrap_err();
        assert!(e.contains("docker-credential-olmctl-test-none"), "{e}");
    }
}
