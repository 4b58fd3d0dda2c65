//! A JDWP proxy that proves pipelining without a clock: while gated, it
//! withholds the JVM's replies to a level's commands until the client has
//! sent every command that level is expected to hold. A client that waits
//! for a reply before sending the next command of the same level never
//! gets it (the call then hangs until the test's guard gives up), so a
//! test that passes shows the commands really went out together. Events
//! from the JVM and replies outside the gate pass straight through.

use std::collections::{HashSet, VecDeque};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// `(command set, command)` of a JDWP command type.
pub fn cmd<C: jvmscope::jdwp::Command>() -> (u8, u8) {
    (C::SET, C::ID)
}

#[derive(Default)]
struct Gate {
    /// Commands each level still to come must hold before its replies go.
    script: VecDeque<usize>,
    /// The commands seen, level by level, since the gate was set (those
    /// after the script ran out in one more level).
    levels: Vec<Vec<(u8, u8)>>,
    /// Commands of the current level so far.
    seen: usize,
    /// Ids of the current level's commands, whose replies are held.
    ids: HashSet<u32>,
    held: Vec<Vec<u8>>,
    recording: bool,
}

/// A proxy in front of a JVM's JDWP port.
pub struct LevelProxy {
    port: u16,
    gate: Arc<Mutex<Gate>>,
}

impl LevelProxy {
    /// Listens on loopback, forwarding every connection to `jvm_port`.
    pub fn start(jvm_port: u16) -> LevelProxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind proxy");
        let port = listener.local_addr().expect("proxy addr").port();
        let gate = Arc::new(Mutex::new(Gate::default()));
        let g = gate.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                let gate = g.clone();
                std::thread::spawn(move || serve(client, jvm_port, gate));
            }
        });
        LevelProxy { port, gate }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// From now on, level `i` must hold `levels[i]` commands before their
    /// replies are let through; afterwards commands are only recorded.
    pub fn gate(&self, levels: &[usize]) {
        let mut g = self.gate.lock().expect("gate");
        *g = Gate {
            script: levels.iter().copied().collect(),
            recording: true,
            ..Gate::default()
        };
    }

    /// The commands seen since [`Self::gate`], level by level; recording
    /// stops.
    pub fn levels(&self) -> Vec<Vec<(u8, u8)>> {
        let mut g = self.gate.lock().expect("gate");
        g.recording = false;
        std::mem::take(&mut g.levels)
    }
}

/// Reads one packet (header and data) whole.
fn packet(from: &mut TcpStream) -> Option<Vec<u8>> {
    let mut header = [0u8; 11];
    from.read_exact(&mut header).ok()?;
    let len = u32::from_be_bytes([header[0], header[1], header[2], header[3]]) as usize;
    let mut bytes = header.to_vec();
    bytes.resize(len.max(11), 0);
    from.read_exact(&mut bytes[11..]).ok()?;
    Some(bytes)
}

fn id(p: &[u8]) -> u32 {
    u32::from_be_bytes([p[4], p[5], p[6], p[7]])
}

fn serve(mut client: TcpStream, jvm_port: u16, gate: Arc<Mutex<Gate>>) {
    let Ok(mut jvm) = TcpStream::connect(("127.0.0.1", jvm_port)) else {
        return;
    };
    let _ = client.set_nodelay(true);
    let _ = jvm.set_nodelay(true);
    let mut hs = [0u8; 14];
    if client.read_exact(&mut hs).is_err()
        || jvm.write_all(&hs).is_err()
        || jvm.read_exact(&mut hs).is_err()
        || client.write_all(&hs).is_err()
    {
        return;
    }
    let to_client = Arc::new(Mutex::new(client.try_clone().expect("clone client")));
    let mut jvm_in = jvm.try_clone().expect("clone jvm");
    // JVM → client: replies of the gated level are held.
    let g = gate.clone();
    let out = to_client.clone();
    std::thread::spawn(move || {
        while let Some(p) = packet(&mut jvm_in) {
            let mut gate = g.lock().expect("gate");
            let reply = p[8] & 0x80 != 0;
            if reply && gate.recording && gate.ids.contains(&id(&p)) {
                gate.held.push(p);
            } else if out.lock().expect("client").write_all(&p).is_err() {
                return;
            }
        }
    });
    // Client → JVM: commands are counted into levels.
    while let Some(p) = packet(&mut client) {
        let mut g = gate.lock().expect("gate");
        if g.recording {
            if g.seen == 0 {
                g.levels.push(Vec::new());
            }
            if let Some(level) = g.levels.last_mut() {
                level.push((p[9], p[10]));
            }
            g.seen += 1;
            if !g.script.is_empty() {
                g.ids.insert(id(&p));
            }
        }
        if jvm.write_all(&p).is_err() {
            return;
        }
        if g.recording && g.script.front() == Some(&g.seen) {
            g.script.pop_front();
            g.seen = 0;
            g.ids.clear();
            let held = std::mem::take(&mut g.held);
            let mut out = to_client.lock().expect("client");
            for r in held {
                if out.write_all(&r).is_err() {
                    return;
                }
            }
        }
    }
}
