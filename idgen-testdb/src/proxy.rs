//! [`TcpProxy`]: a TCP forwarder a test can cut, to make a database unreachable and back.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::net::{TcpListener, TcpStream};
use tokio::task::{AbortHandle, JoinHandle};

/// Forwards connections from a local port to `upstream`, until [`cut`](TcpProxy::cut): then it
/// drops every open connection and closes new ones at once, as a failed network would, until
/// [`restore`](TcpProxy::restore). Point a pool at [`addr`](TcpProxy::addr) instead of the server.
///
/// Must be started inside a tokio runtime; stops when dropped.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// use tokio::io::{AsyncReadExt, AsyncWriteExt};
/// use idgen_testdb::TcpProxy;
///
/// let server = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
/// let upstream = server.local_addr()?;
/// tokio::spawn(async move {
///     while let Ok((mut conn, _)) = server.accept().await {
///         tokio::spawn(async move { let _ = conn.write_all(b"hi").await; });
///     }
/// });
///
/// let proxy = TcpProxy::start(upstream).await?;
/// let mut buf = [0; 2];
/// tokio::net::TcpStream::connect(proxy.addr()).await?.read_exact(&mut buf).await?;
/// assert_eq!(&buf, b"hi");
///
/// proxy.cut();
/// let mut conn = tokio::net::TcpStream::connect(proxy.addr()).await?;
/// assert!(conn.read_exact(&mut buf).await.is_err()); // closed at once
///
/// proxy.restore();
/// tokio::net::TcpStream::connect(proxy.addr()).await?.read_exact(&mut buf).await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct TcpProxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: JoinHandle<()>,
}

#[derive(Debug, Default)]
struct Shared {
    cut: AtomicBool,
    connections: Mutex<Vec<AbortHandle>>,
}

impl TcpProxy {
    /// Listens on a free port of 127.0.0.1 and forwards each connection to `upstream`.
    pub async fn start(upstream: SocketAddr) -> io::Result<TcpProxy> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::default());
        let accept = tokio::spawn(accept_loop(listener, upstream, Arc::clone(&shared)));
        Ok(TcpProxy {
            addr,
            shared,
            accept,
        })
    }

    /// The local address to connect to instead of the upstream server.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Drops every forwarded connection and closes new ones as soon as they are accepted.
    pub fn cut(&self) {
        self.shared.cut.store(true, Ordering::SeqCst);
        for connection in self.shared.lock().drain(..) {
            connection.abort();
        }
    }

    /// Forwards new connections again.
    pub fn restore(&self) {
        self.shared.cut.store(false, Ordering::SeqCst);
    }

    /// Whether the proxy is cut.
    pub fn is_cut(&self) -> bool {
        self.shared.cut.load(Ordering::SeqCst)
    }
}

impl Drop for TcpProxy {
    fn drop(&mut self) {
        self.accept.abort();
        for connection in self.shared.lock().drain(..) {
            connection.abort();
        }
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<AbortHandle>> {
        self.connections
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

async fn accept_loop(listener: TcpListener, upstream: SocketAddr, shared: Arc<Shared>) {
    loop {
        let Ok((client, _)) = listener.accept().await else {
            continue;
        };
        if shared.cut.load(Ordering::SeqCst) {
            drop(client);
            continue;
        }
        let forward = tokio::spawn(forward(client, upstream));
        let mut connections = shared.lock();
        connections.retain(|c| !c.is_finished());
        // A cut between the check above and here must still drop this connection.
        if shared.cut.load(Ordering::SeqCst) {
            forward.abort();
        } else {
            connections.push(forward.abort_handle());
        }
    }
}

async fn forward(mut client: TcpStream, upstream: SocketAddr) {
    let Ok(mut server) = TcpStream::connect(upstream).await else {
        return;
    };
    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
}
