//! Self-tests of the fake JDWP peer (`fake_jdwp`) driven by a plain TcpStream client.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::fake_jdwp::{
    Behaviour, FakeJdwp, FakeOpts, HANDSHAKE, HEADER_LEN, HTTP_400, Step, cmd, command_packet,
    id_sizes_reply_with, version_reply,
};

const TIMEOUT: Duration = Duration::from_secs(10);

fn connect(fake: &FakeJdwp) -> TcpStream {
    let stream = TcpStream::connect(fake.address())
        .unwrap_or_else(|e| panic!("cannot connect to the fake at {}: {e}", fake.address()));
    stream
        .set_read_timeout(Some(TIMEOUT))
        .expect("set read timeout");
    stream
}

fn handshake(stream: &mut TcpStream) {
    stream.write_all(HANDSHAKE).expect("write handshake");
    let mut echo = [0u8; 14];
    stream.read_exact(&mut echo).expect("read handshake echo");
    assert_eq!(&echo, HANDSHAKE);
}

/// Sends a command and reads the reply header + data: (id, flags, error, data).
fn roundtrip(stream: &mut TcpStream, id: u32, command: (u8, u8)) -> (u32, u8, u16, Vec<u8>) {
    stream
        .write_all(&command_packet(id, command, &[]))
        .expect("write command");
    read_reply(stream)
}

fn read_reply(stream: &mut TcpStream) -> (u32, u8, u16, Vec<u8>) {
    let mut header = [0u8; HEADER_LEN];
    stream.read_exact(&mut header).expect("read reply header");
    let len = u32::from_be_bytes([header[0], header[1], header[2], header[3]]) as usize;
    let id = u32::from_be_bytes([header[4], header[5], header[6], header[7]]);
    let error = u16::from_be_bytes([header[9], header[10]]);
    let mut data = vec![0u8; len - HEADER_LEN];
    stream.read_exact(&mut data).expect("read reply data");
    (id, header[8], error, data)
}

#[test]
fn handshake_then_scripted_replies() {
    let fake = FakeJdwp::start(Behaviour::HandshakeThen(vec![
        Step::Reply(vec![1, 2, 3]),
        Step::ReplyError(21),
        Step::Close,
    ]));
    let mut stream = connect(&fake);
    handshake(&mut stream);
    assert_eq!(
        roundtrip(&mut stream, 7, (1, 1)),
        (7, 0x80, 0, vec![1, 2, 3])
    );
    assert_eq!(roundtrip(&mut stream, 8, (11, 1)), (8, 0x80, 21, vec![]));
    stream
        .write_all(&command_packet(9, (1, 4), &[]))
        .expect("write command");
    let mut rest = Vec::new();
    let n = stream.read_to_end(&mut rest).expect("read until close");
    assert_eq!(n, 0, "Close must close without writing");
    fake.wait_until("three commands", TIMEOUT, |view| view.received.len() == 3);
    assert_eq!(fake.commands(), vec![(1, 1), (11, 1), (1, 4)]);
    assert_eq!(fake.received()[2].id, 9);
    assert_eq!(fake.handshakes(), 1);
}

#[test]
fn http_mode_answers_http() {
    let fake = FakeJdwp::start(Behaviour::Http);
    let mut stream = connect(&fake);
    stream.write_all(HANDSHAKE).expect("write handshake");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).expect("read HTTP answer");
    assert_eq!(answer, HTTP_400);
    fake.wait_until("the request bytes", TIMEOUT, |view| view.closed == 1);
    assert_eq!(fake.raw_received(), vec![HANDSHAKE.to_vec()]);
}

#[test]
fn silent_mode_never_writes_and_holds_the_socket() {
    let fake = FakeJdwp::start(Behaviour::Silent);
    let mut stream = connect(&fake);
    stream.write_all(HANDSHAKE).expect("write handshake");
    stream
        .set_read_timeout(Some(Duration::from_millis(300)))
        .expect("set read timeout");
    let mut buf = [0u8; 1];
    let err = stream
        .read(&mut buf)
        .expect_err("silent fake must neither write nor close");
    assert!(
        matches!(
            err.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
        "unexpected error {err}"
    );
    drop(fake);
    stream
        .set_read_timeout(Some(TIMEOUT))
        .expect("set read timeout");
    assert_eq!(
        stream.read(&mut buf).unwrap_or(0),
        0,
        "dropping the fake closes the socket"
    );
}

#[test]
fn auto_mode_answers_attach_then_applies_steps() {
    let fake = FakeJdwp::start_with(
        Behaviour::Auto {
            then: vec![Step::Truncated],
        },
        FakeOpts { id_size: 4 },
    );
    let mut stream = connect(&fake);
    handshake(&mut stream);
    assert_eq!(
        roundtrip(&mut stream, 1, cmd::VERSION),
        (1, 0x80, 0, version_reply())
    );
    assert_eq!(
        roundtrip(&mut stream, 2, cmd::ID_SIZES),
        (2, 0x80, 0, id_sizes_reply_with(4))
    );
    assert_eq!(roundtrip(&mut stream, 3, cmd::CAPABILITIES_NEW).3.len(), 32);
    assert_eq!(
        roundtrip(&mut stream, 4, cmd::ALL_THREADS).3,
        vec![0, 0, 0, 0]
    );
    // A non-automatic command gets the truncated reply: header says 111 bytes, 16 arrive.
    stream
        .write_all(&command_packet(5, (2, 1), &[]))
        .expect("write command");
    let mut header = [0u8; HEADER_LEN];
    stream
        .read_exact(&mut header)
        .expect("read truncated header");
    assert_eq!(
        u32::from_be_bytes([header[0], header[1], header[2], header[3]]),
        111
    );
    let mut data = [0u8; 5];
    stream.read_exact(&mut data).expect("read the 5 bytes");
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .expect("set read timeout");
    assert!(
        stream.read(&mut [0u8; 1]).is_err(),
        "nothing follows the truncated part and the socket stays open"
    );
    assert_eq!(
        fake.commands(),
        vec![
            cmd::VERSION,
            cmd::ID_SIZES,
            cmd::CAPABILITIES_NEW,
            cmd::ALL_THREADS,
            (2, 1)
        ]
    );
}

#[test]
fn after_attach_faults_the_next_command_whatever_it_is() {
    let fake = FakeJdwp::start(Behaviour::AfterAttach {
        skip: 1,
        then: vec![Step::Oversized],
    });
    let mut stream = connect(&fake);
    handshake(&mut stream);
    assert_eq!(roundtrip(&mut stream, 1, cmd::VERSION).2, 0);
    assert_eq!(roundtrip(&mut stream, 2, cmd::ID_SIZES).3.len(), 20);
    // skip 1: one more command is still answered normally (unknown ones get NOT_IMPLEMENTED).
    assert_eq!(roundtrip(&mut stream, 3, (2, 1)).2, 99);
    // Then even an auto-answerable command gets the fault.
    stream
        .write_all(&command_packet(4, cmd::ALL_THREADS, &[]))
        .expect("write command");
    let mut header = [0u8; HEADER_LEN];
    stream
        .read_exact(&mut header)
        .expect("read oversized header");
    assert_eq!(
        u32::from_be_bytes([header[0], header[1], header[2], header[3]]),
        0x7FFF_FFF0
    );
    assert_eq!(
        u32::from_be_bytes([header[4], header[5], header[6], header[7]]),
        4
    );
}

#[test]
fn bad_handshake_is_rejected_and_recorded() {
    let fake = FakeJdwp::start(Behaviour::Auto { then: vec![] });
    let mut stream = connect(&fake);
    stream.write_all(b"GET / HTTP/1.1").expect("write");
    let mut rest = Vec::new();
    stream.read_to_end(&mut rest).expect("read until close");
    assert!(rest.is_empty());
    fake.wait_until("the connection to end", TIMEOUT, |view| view.closed == 1);
    assert_eq!(fake.handshakes(), 0);
    assert_eq!(fake.raw_received(), vec![b"GET / HTTP/1.1".to_vec()]);
}
