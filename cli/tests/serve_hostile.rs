//! `olmctl catalog serve` against slow and greedy clients on 127.0.0.1 (issue 28, items 1–3):
//! raw HTTP/2 frames for what a well-behaved client would never send, tonic (hyper's h2) for
//! the load test; and `--http` (catalogd's API) against many-range requests that are never
//! read (issue 39, item 2). Every wait is bounded; memory and CPU are read from /proc.

mod common;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::procfs::{cpu_seconds, rss_kib};
use common::served::{Server, spawn_http};
use olmctl::serve::api;
use olmctl::serve::api::registry_client::RegistryClient;
use tonic_health::pb::health_client::HealthClient;

const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Starts the server on the fixture catalog, under `ulimit -n` when given, and waits until a
/// health check says SERVING.
fn start(nofile: Option<u32>, flags: &[&str]) -> Server {
    let server = common::served::spawn(&common::fixture_catalog(), nofile, flags);
    let port = server.port;
    rt().block_on(async {
        let deadline = Instant::now() + Duration::from_secs(60);
        while health(port).await.is_err() {
            assert!(Instant::now() < deadline, "never SERVING");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    server
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

async fn channel(port: u16) -> Result<tonic::transport::Channel, String> {
    tonic::transport::Endpoint::from_shared(format!("http://127.0.0.1:{port}"))
        .map_err(|e| e.to_string())?
        .connect_timeout(Duration::from_secs(5))
        .timeout(Duration::from_secs(30))
        .connect()
        .await
        .map_err(|e| e.to_string())
}

/// One health check on a new connection.
async fn health(port: u16) -> Result<(), String> {
    let mut h = HealthClient::new(channel(port).await?);
    let r = h
        .check(tonic_health::pb::HealthCheckRequest {
            service: String::new(),
        })
        .await
        .map_err(|e| e.to_string())?;
    (r.get_ref().status == tonic_health::pb::health_check_response::ServingStatus::Serving as i32)
        .then_some(())
        .ok_or_else(|| "not serving".to_string())
}

fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = payload.len();
    let mut f = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags];
    f.extend_from_slice(&stream.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// A HEADERS frame opening stream `id` (POST / over http, authority "a"), without END_STREAM:
/// the stream stays open, as a greedy client leaves it.
fn open_stream(id: u32) -> Vec<u8> {
    // HPACK: :method POST (3), :scheme http (6), :path / (4), :authority "a" (name 1, literal
    // without indexing).
    frame(1, 0x4, id, &[0x83, 0x86, 0x84, 0x01, 0x01, b'a'])
}

/// Reads frames until `want` says stop or the connection ends; returns (type, flags, stream,
/// payload) of each.
fn read_frames(
    s: &mut TcpStream,
    mut want: impl FnMut(&[(u8, u8, u32, Vec<u8>)]) -> bool,
) -> Vec<(u8, u8, u32, Vec<u8>)> {
    let mut buf = Vec::new();
    let mut frames = Vec::new();
    let mut chunk = [0u8; 65536];
    while !want(&frames) {
        let n = match s.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        buf.extend_from_slice(&chunk[..n]);
        while buf.len() >= 9 {
            let len =
                (usize::from(buf[0]) << 16) | (usize::from(buf[1]) << 8) | usize::from(buf[2]);
            if buf.len() < 9 + len {
                break;
            }
            let id = u32::from_be_bytes([buf[5], buf[6], buf[7], buf[8]]) & 0x7fff_ffff;
            frames.push((buf[3], buf[4], id, buf[9..9 + len].to_vec()));
            buf.drain(..9 + len);
        }
    }
    frames
}

/// Item 1: the server advertises SETTINGS_MAX_CONCURRENT_STREAMS and refuses streams beyond
/// it; a client opening 20,000 streams on one connection costs a bounded amount of memory,
/// and the memory is given back when it leaves.
#[test]
fn streams_beyond_the_advertised_limit_are_refused_and_memory_stays_bounded() {
    let server = start(None, &[]);
    let pid = server.child.id();
    let baseline = rss_kib(pid);
    let mut s = TcpStream::connect(("127.0.0.1", server.port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    let mut hello = PREFACE.to_vec();
    hello.extend(frame(4, 0, 0, &[]));
    s.write_all(&hello).expect("preface");
    let settings = read_frames(&mut s, |f| f.iter().any(|x| x.0 == 4 && x.1 & 1 == 0));
    let server_settings = settings
        .iter()
        .find(|x| x.0 == 4 && x.1 & 1 == 0)
        .expect("the server's SETTINGS");
    let max_streams = server_settings
        .3
        .chunks(6)
        .find(|c| c[..2] == [0, 3])
        .map(|c| u32::from_be_bytes([c[2], c[3], c[4], c[5]]));
    assert_eq!(max_streams, Some(256), "SETTINGS_MAX_CONCURRENT_STREAMS");
    s.write_all(&frame(4, 1, 0, &[])).expect("settings ack");
    // 20,000 streams in batches (about 600 KB), ignoring the limit.
    const STREAMS: u32 = 20_000;
    let writer = {
        let mut w = s.try_clone().expect("clone");
        std::thread::spawn(move || {
            let mut batch = Vec::new();
            for i in 0..STREAMS {
                batch.extend(open_stream(2 * i + 1));
                if batch.len() > 64 * 1024 {
                    if w.write_all(&batch).is_err() {
                        return;
                    }
                    batch.clear();
                }
            }
            let _ = w.write_all(&batch);
        })
    };
    let mut refused = 0;
    let mut answered = 0;
    let mut peak = 0;
    let frames = read_frames(&mut s, |f| {
        peak = peak.max(rss_kib(pid));
        refused = f.iter().filter(|x| x.0 == 3 && x.3 == [0, 0, 0, 7]).count();
        answered = f.iter().filter(|x| x.0 == 1).count();
        refused + answered >= STREAMS as usize || f.iter().any(|x| x.0 == 7)
    });
    writer.join().expect("writer");
    let goaway = frames.iter().find(|x| x.0 == 7);
    eprintln!(
        "{answered} streams answered, {refused} refused (REFUSED_STREAM), goaway {goaway:?}; RSS {baseline} KiB before, peak {peak} KiB"
    );
    assert!(
        refused > 0 || goaway.is_some(),
        "streams beyond the limit are refused or the connection is ended"
    );
    assert!(
        peak < baseline + 64 * 1024,
        "a greedy connection costs less than 64 MiB: {baseline} -> {peak} KiB"
    );
    drop(s);
    // Once it has gone, the server is back near where it started.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut after = rss_kib(pid);
    while after > baseline + 16 * 1024 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        after = rss_kib(pid);
    }
    eprintln!("RSS {after} KiB after the client left");
    assert!(
        after <= baseline + 16 * 1024,
        "memory given back: {baseline} -> {peak} -> {after} KiB"
    );
    rt().block_on(async { health(server.port).await.expect("still serving") });
}

/// Item 2: an idle TCP connection, the preface alone, half a frame, and a connection idle
/// after its handshake are each closed by their deadline (here shortened by the flags).
#[test]
fn stalled_and_idle_connections_are_closed() {
    let server = start(None, &["--handshake-timeout", "1s", "--idle-timeout", "2s"]);
    let mut settings = PREFACE.to_vec();
    settings.extend(frame(4, 0, 0, &[]));
    let mut half = PREFACE.to_vec();
    half.extend(&frame(4, 0, 0, &[0, 3, 0, 0, 0, 100])[..11]);
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("idle TCP", vec![]),
        ("preface only", PREFACE.to_vec()),
        ("half a frame", half),
        ("idle after the handshake", settings),
    ];
    let handles: Vec<_> = cases
        .into_iter()
        .map(|(what, bytes)| {
            let port = server.port;
            std::thread::spawn(move || {
                let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
                // Bounded: a connection still open after 30 s fails the test.
                s.set_read_timeout(Some(Duration::from_secs(30)))
                    .expect("timeout");
                s.write_all(&bytes).expect("write");
                let started = Instant::now();
                let mut chunk = [0u8; 4096];
                let closed = loop {
                    match s.read(&mut chunk) {
                        Ok(0) => break true,
                        Ok(_) => continue,
                        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break true,
                        Err(_) => break false,
                    }
                };
                (what, closed, started.elapsed())
            })
        })
        .collect();
    for h in handles {
        let (what, closed, took) = h.join().expect("thread");
        eprintln!("{what}: closed {closed} after {took:?}");
        assert!(closed, "{what}: the server closes it");
    }
    rt().block_on(async { health(server.port).await.expect("still serving") });
}

/// Item 3: with descriptors short (`ulimit -n 256`) and 400 connections that never speak,
/// the server does not spin on accept errors, and a real client is served once the stalled
/// connections have timed out.
#[test]
fn running_out_of_descriptors_neither_spins_nor_locks_clients_out() {
    let server = start(Some(256), &["--handshake-timeout", "2s"]);
    let pid = server.child.id();
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], server.port));
    // Bounded: a connect the kernel leaves hanging (its queue full) is given up after 1 s.
    let hogs: Vec<TcpStream> = (0..400)
        .filter_map(|_| TcpStream::connect_timeout(&addr, Duration::from_secs(1)).ok())
        .collect();
    assert!(hogs.len() >= 300, "{} connections opened", hogs.len());
    std::thread::sleep(Duration::from_millis(300));
    let before = cpu_seconds(pid);
    let window = Duration::from_secs(2);
    std::thread::sleep(window);
    let used = cpu_seconds(pid) - before;
    eprintln!(
        "{} idle connections: the server used {used:.2} s of CPU in {window:?}",
        hogs.len()
    );
    assert!(
        used < 0.5,
        "no busy loop on accept errors: {used:.2} s of CPU in {window:?}"
    );
    rt().block_on(async {
        let started = Instant::now();
        let r = tokio::time::timeout(Duration::from_secs(60), async {
            loop {
                if health(server.port).await.is_ok() {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        })
        .await;
        eprintln!("a real client was served after {:?}", started.elapsed());
        assert!(r.is_ok(), "a real client is served");
    });
    drop(hogs);
}

/// The load test: 300 clients at once, each on its own connection, three rounds of calls;
/// memory after the third round is where it was after the first.
#[test]
fn three_hundred_concurrent_clients_with_flat_memory() {
    // With the server's default bounds. Its connections share the kernel's TCP memory with
    // the other tests of this file, which run beside it: two CI runs saw connections reset
    // here (1, then 32 of 300) while the many-range test held 2.2 GB of socket buffers, past
    // `tcp_mem`; that test now connects as an Ethernet client does (`connect_small_window`).
    let server = start(None, &[]);
    let pid = server.child.id();
    let port = server.port;
    let rt = rt();
    let round = |n: usize| {
        rt.block_on(async move {
            let tasks: Vec<_> = (0..300)
                .map(|_| {
                    tokio::spawn(async move {
                        let ch = channel(port).await?;
                        let mut c = RegistryClient::new(ch);
                        let mut list = c
                            .list_packages(api::ListPackageRequest {})
                            .await
                            .map_err(|e| e.to_string())?
                            .into_inner();
                        let mut names = Vec::new();
                        while let Some(p) = list.message().await.map_err(|e| e.to_string())? {
                            names.push(p.name);
                        }
                        let first = names.first().cloned().unwrap_or_default();
                        let p = c
                            .get_package(api::GetPackageRequest { name: first })
                            .await
                            .map_err(|e| e.to_string())?;
                        Ok::<_, String>((names.len(), p.into_inner().channels.len()))
                    })
                })
                .collect();
            // Every outcome is gathered before judging, so that a failure says how many calls
            // failed and how (one reset connection, or a server gone for all of them).
            let mut ok = 0;
            let mut failed: BTreeMap<String, usize> = BTreeMap::new();
            for t in tasks {
                match t.await.expect("task") {
                    Ok((packages, channels)) => {
                        assert!(packages > 0 && channels > 0, "round {n}");
                        ok += 1;
                    }
                    Err(e) => *failed.entry(e).or_default() += 1,
                }
            }
            assert!(
                failed.is_empty(),
                "round {n}: {ok} calls served, failed: {failed:#?}"
            );
            ok
        })
    };
    assert_eq!(round(1), 300);
    let first = rss_kib(pid);
    assert_eq!(round(2), 300);
    assert_eq!(round(3), 300);
    let third = rss_kib(pid);
    eprintln!("RSS after round 1: {first} KiB, after round 3: {third} KiB");
    assert!(
        third <= first + first / 10 + 4 * 1024,
        "memory is flat: {first} -> {third} KiB"
    );
}

/// Item 5: a 100 KB package name is not echoed back in full: the status comes back as a
/// status (not as oversized metadata the client refuses), naming a prefix and the length.
#[test]
fn error_messages_echo_a_short_prefix_of_the_request() {
    let server = start(None, &[]);
    rt().block_on(async {
        let mut c = RegistryClient::new(channel(server.port).await.expect("connect"));
        let name = "a".repeat(100_000);
        let err = c
            .get_package(api::GetPackageRequest { name: name.clone() })
            .await
            .expect_err("no such package");
        eprintln!("{:?}: {} bytes", err.code(), err.message().len());
        assert_eq!(err.code(), tonic::Code::Unknown, "{err:?}");
        assert!(
            err.message().starts_with("package \"aaaa") && err.message().len() < 256,
            "{} bytes: {:.80}",
            err.message().len(),
            err.message()
        );
        assert!(err.message().ends_with("... (100000 bytes) not found"));
        // A short name is echoed as opm echoes it.
        let err = c
            .get_package(api::GetPackageRequest {
                name: "no-such".into(),
            })
            .await
            .expect_err("no such package");
        assert_eq!(err.message(), "package \"no-such\" not found");
    });
}

/// Connections of the many-range test.
const RANGE_CONNECTIONS: usize = 1_000;

/// Ranges each asks: `-1` (the last byte) 20,000 times, a 60 KB header, under the 64 KiB
/// request head.
const RANGES: usize = 20_000;

/// What one such connection may cost the server, at most: four times hyper's buffer
/// (`MAX_BUFFER`, 64 KiB): the buffer its request head was read into, which the `Range`
/// header the answer reads its ranges from keeps (it may have grown to twice `MAX_BUFFER`),
/// the answer queued for a client that does not read (`MAX_BUFFER`), and as much for the
/// rest (hyper's next read buffer, the response head, the task and its timers). Measured
/// (debug build, `--no-grpc`, receive windows of 4 KiB): 1,000 connections took the server
/// from 31.5 to 171 MB, 140 KiB each; before a multipart answer made its parts as they were
/// sent, they held every part header, about 6.5 MB each.
const RANGE_CONNECTION_BUDGET_KIB: u64 = 4 * (olmctl::serve::http::server::MAX_BUFFER as u64 >> 10);

/// Raises this process's soft descriptor limit (inherited by the server it starts) to at least
/// `need`, within the hard limit; returns it.
fn raise_nofile(need: libc::rlim_t) -> libc::rlim_t {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit only read and write `lim`.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim), 0);
        if lim.rlim_cur < need {
            lim.rlim_cur = need.min(lim.rlim_max);
            assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &lim), 0);
        }
    }
    lim.rlim_cur
}

/// A connection to 127.0.0.1:`port` whose receive buffer is 4 KiB from the start (set before
/// connecting, so the window it advertises stays small), as a client that does not mean to
/// read asks: the server's answer then waits in the server, not in this machine's socket
/// buffers (megabytes a connection on loopback otherwise, which the server spends its time
/// filling). Its MSS is an Ethernet path's 1,460 bytes, not loopback's 64 KiB: Linux sizes a
/// new connection's send buffer from the MSS (`tcp_init_buffer_space`, 2 x 10 segments), so
/// on loopback each of the server's ends would take 4 MiB of kernel memory at once; 1,000 of
/// them passed `tcp_mem` ("TCP: out of memory"), and the kernel reset other tests'
/// connections. The connect waits as the kernel retries it (about 2 min at most).
fn connect_small_window(port: u16) -> std::io::Result<TcpStream> {
    use std::os::fd::FromRawFd;
    // SAFETY: a new socket is created, configured and connected, then owned by the
    // TcpStream (closed on every error path before that).
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let stream = TcpStream::from_raw_fd(fd);
        let size: libc::c_int = 4096;
        let addr = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: port.to_be(),
            sin_addr: libc::in_addr {
                s_addr: u32::from(std::net::Ipv4Addr::LOCALHOST).to_be(),
            },
            sin_zero: [0; 8],
        };
        let mss: libc::c_int = 1460;
        if libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            (&size as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        ) != 0
            || libc::setsockopt(
                fd,
                libc::IPPROTO_TCP,
                libc::TCP_MAXSEG,
                (&mss as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            ) != 0
            || libc::connect(
                fd,
                (&addr as *const libc::sockaddr_in).cast(),
                std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
            ) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
        Ok(stream)
    }
}

/// Issue 39, item 2: 1,000 connections each asking `/all` for 20,000 overlapping one-byte
/// ranges (Go serves them: their lengths add up to less than the content) and reading nothing
/// cost the server at most [`RANGE_CONNECTION_BUDGET_KIB`] each, since a multipart answer
/// makes each part when it is sent; a normal client is answered meanwhile.
#[test]
fn many_range_requests_left_unread_stay_within_the_budget() {
    // This process holds the client ends; the server (a child) inherits the limit, and its
    // connection cap (`--max-connections` 1,024, at most half of `ulimit -n` after 64 kept)
    // must admit every connection.
    let nofile = raise_nofile(4_096);
    assert!(
        nofile >= 2 * (RANGE_CONNECTIONS as u64 + 1) + 64 + 64,
        "ulimit -n {nofile}: the test needs 2,200 descriptors (raise the hard limit)"
    );
    let server = spawn_http(
        &common::fixture_catalog(),
        &["--catalog-name", "community", "--no-grpc"],
    );
    let port = server.http_port.expect("the HTTP port");
    let all = "/catalogs/community/api/v1/all";
    common::http::wait_ready(port, all);
    let pid = server.child.id();
    let idle = rss_kib(pid);
    let head = format!(
        "GET {all} HTTP/1.1\r\nHost: 127.0.0.1\r\nRange: bytes={}\r\n\r\n",
        vec!["-1"; RANGES].join(",")
    );
    let started = Instant::now();
    let mut peak = idle;
    let conns: Vec<TcpStream> = (0..RANGE_CONNECTIONS)
        .map(|_| {
            let mut s = connect_small_window(port).expect("connect");
            s.write_all(head.as_bytes()).expect("send the request");
            peak = peak.max(rss_kib(pid));
            s
        })
        .collect();
    // Every answer has begun (the server has made each): its status line is there to read.
    for s in &conns {
        s.set_read_timeout(Some(Duration::from_secs(120)))
            .expect("timeout");
        let mut status = [0u8; 12];
        let mut got = 0;
        while got < status.len() {
            got = s.peek(&mut status).expect("an answer within 120 s");
        }
        assert_eq!(&status, b"HTTP/1.1 206");
        peak = peak.max(rss_kib(pid));
    }
    let budget = RANGE_CONNECTIONS as u64 * RANGE_CONNECTION_BUDGET_KIB;
    eprintln!(
        "{RANGE_CONNECTIONS} connections of {RANGES} ranges ({} bytes a request), none read, all answering after {:?}: RSS {idle} KiB idle, peak {peak} KiB (+{} KiB, {} KiB a connection; budget +{budget} KiB)",
        head.len(),
        started.elapsed(),
        peak - idle,
        (peak - idle) / RANGE_CONNECTIONS as u64
    );
    assert!(
        peak <= idle + budget,
        "{RANGE_CONNECTIONS} stalled many-range answers: RSS {idle} -> {peak} KiB, over the budget of {budget} KiB"
    );
    // A normal client is answered, in full, while they wait.
    let a = common::http::request(port, "GET", all, &[]).expect("a normal request");
    assert_eq!(a.status, 200);
    assert_eq!(
        a.header("content-length"),
        Some(a.body.len().to_string().as_str())
    );
    assert!(a.body.len() > 1_000_000, "{} bytes", a.body.len());
    eprintln!("a normal client answered after {:?}", started.elapsed());
    drop(conns);
    std::thread::sleep(Duration::from_secs(1));
    eprintln!("RSS {} KiB after they closed", rss_kib(pid));
    assert_eq!(
        common::http::request(port, "HEAD", all, &[])
            .expect("a request after they closed")
            .status,
        200
    );
}
