//! A TCP proxy in front of a registry that fails the first connections: some are closed
//! without an answer, the next ones get `503 Service Unavailable`; later ones are forwarded.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// A running proxy.
pub struct FlakyProxy {
    /// `127.0.0.1:<port>`.
    pub addr: String,
    /// Connections accepted so far.
    pub connections: Arc<AtomicUsize>,
}

impl FlakyProxy {
    /// Proxies to `upstream`, closing the first `drops` connections without an answer and
    /// answering 503 on the next `errors`.
    pub fn start(upstream: &str, drops: usize, errors: usize) -> FlakyProxy {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = l.local_addr().expect("addr").to_string();
        let connections = Arc::new(AtomicUsize::new(0));
        let count = connections.clone();
        let upstream = upstream.to_string();
        std::thread::spawn(move || {
            for conn in l.incoming() {
                let Ok(mut c) = conn else { continue };
                let n = count.fetch_add(1, Ordering::SeqCst);
                if n < drops {
                    // Read the request first so the client sees the connection die mid-way.
                    let _ = c.set_read_timeout(Some(Duration::from_millis(500)));
                    let mut buf = [0u8; 4096];
                    let _ = c.read(&mut buf);
                    drop(c);
                    continue;
                }
                if n < drops + errors {
                    let _ = c.set_read_timeout(Some(Duration::from_millis(500)));
                    let mut buf = [0u8; 4096];
                    let _ = c.read(&mut buf);
                    let _ = c.write_all(
                        b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    );
                    let _ = c.shutdown(Shutdown::Both);
                    continue;
                }
                let Ok(u) = TcpStream::connect(&upstream) else {
                    continue;
                };
                let (Ok(mut c2), Ok(mut u2)) = (c.try_clone(), u.try_clone()) else {
                    continue;
                };
                let mut u = u;
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut c2, &mut u2);
                    let _ = u2.shutdown(Shutdown::Write);
                });
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut u, &mut c);
                    let _ = c.shutdown(Shutdown::Write);
                });
            }
        });
        FlakyProxy { addr, connections }
    }
}
