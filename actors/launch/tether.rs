//! Ties a launched JVM's life to this server's: unless it is launched to
//! stay (`detach_on_disconnect`), the kernel kills it when the server dies,
//! even by SIGKILL, when no code of ours runs to terminate it.
//!
//! On Linux the child asks for `PR_SET_PDEATHSIG` between fork and exec.
//! That signal follows the *thread* that forked the child, not the process,
//! so children are forked from one thread that lives as long as the process
//! (a runtime worker could be retired by `block_in_place`, a blocking-pool
//! thread after it idles). SIGKILL, not SIGTERM: nobody is left to wait
//! for shutdown hooks, and a hook that hangs would leave the orphan alive.
//! A watcher on a pipe would need a second process that outlives us to do
//! the killing; the kernel does it without one.

use std::io;
use std::sync::OnceLock;
use std::sync::mpsc;

use tokio::process::{Child, Command};

/// One spawn for the spawning thread.
struct Job {
    cmd: Command,
    runtime: tokio::runtime::Handle,
    reply: tokio::sync::oneshot::Sender<io::Result<Child>>,
}

/// Spawns `cmd`; unless `stays`, the child dies with this process.
pub async fn spawn(mut cmd: Command, stays: bool) -> io::Result<Child> {
    if stays {
        return cmd.spawn();
    }
    die_with_parent(&mut cmd);
    let Some(spawner) = spawner() else {
        return Err(io::Error::other("the launcher thread could not start"));
    };
    let (reply, answer) = tokio::sync::oneshot::channel();
    let job = Job {
        cmd,
        runtime: tokio::runtime::Handle::current(),
        reply,
    };
    spawner
        .send(job)
        .map_err(|_| io::Error::other("the launcher thread is gone"))?;
    answer
        .await
        .map_err(|_| io::Error::other("the launcher thread is gone"))?
}

/// The thread every tethered child is forked from; it never ends.
fn spawner() -> Option<&'static mpsc::Sender<Job>> {
    static SPAWNER: OnceLock<Option<mpsc::Sender<Job>>> = OnceLock::new();
    SPAWNER
        .get_or_init(|| {
            let (tx, rx) = mpsc::channel::<Job>();
            std::thread::Builder::new()
                .name("jvmscope-launcher".into())
                .spawn(move || {
                    for mut job in rx {
                        let _entered = job.runtime.enter();
                        let _ = job.reply.send(job.cmd.spawn());
                    }
                })
                .ok()
                .map(|_| tx)
        })
        .as_ref()
}

#[cfg(target_os = "linux")]
#[expect(
    unsafe_code,
    reason = "pre_exec runs between fork and exec; the closure calls only the \
              async-signal-safe getppid and prctl and allocates nothing"
)]
fn die_with_parent(cmd: &mut Command) {
    let parent = std::process::id();
    // SAFETY: see the reason above; nothing is locked or allocated.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(io::Error::last_os_error());
            }
            // The server may have died before the request took effect.
            if u32::try_from(libc::getppid()).ok() != Some(parent) {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_: &mut Command) {}
