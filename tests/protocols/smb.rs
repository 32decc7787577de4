//! The SMB engine against a real Samba smbd on loopback (tests/support/nas.rs), each test with
//! its own server, share and user: a pattern written at queue depth 8 reads back and is the
//! server's file byte for byte, with signing off and on and with encryption (AES-128-GCM and
//! AES-128-CCM, AES-256 where the server allows only it); and the faults a user meets (wrong
//! password, wrong share, read-only share, unreachable server, a server killed mid-run,
//! encryption asked of SMB 2.1) each give a clear error.
//!
//! Skipped where smbd cannot run (not root, samba not installed), failed under CI
//! (tests/support).

use crate::support;

use iopath::engine::smb::crypto::Cipher;
use iopath::engine::smb::{self, SmbCredentials, SmbEngine, SmbSecurity, SmbUrl};
use iopath::engine::{Completion, Engine, EngineOptions, IoRequest};
use iopath::result::Direction;
use std::time::Duration;
use support::nas::{
    SAMBA_PASSWORD, SAMBA_READ_ONLY_SHARE, SAMBA_USER, SambaServer, assert_holds_pattern,
    established_connections_to, move_blocks, read_back_pattern,
};

const TIMEOUT: Duration = Duration::from_secs(10);
const BLOCK: usize = 64 * 1024;
const BLOCKS: usize = 64;

fn credentials(password: &str) -> SmbCredentials {
    SmbCredentials {
        user: SAMBA_USER.into(),
        password: password.into(),
        domain: String::new(),
    }
}

/// Creates a test file on `server`, writes the pattern at QD 8, flushes, reads it back, and
/// checks the server's own file; returns what the session negotiated.
fn round_trip(server: &SambaServer, security: SmbSecurity) -> smb::SmbSessionFacts {
    let (facts, channels) = round_trip_over(server, security, 1);
    assert_eq!(channels.count, 1);
    facts
}

/// [`round_trip`] with `connections` connections (`--connections`), each counted as an
/// established TCP connection to the server while the engine is open; returns how they were
/// used too.
fn round_trip_over(
    server: &SambaServer,
    security: SmbSecurity,
    connections: u32,
) -> (smb::SmbSessionFacts, smb::SmbChannels) {
    let url = SmbUrl::parse(&server.url("test.bin")).unwrap();
    let credentials = credentials(SAMBA_PASSWORD);
    let missing = smb::find(&url, &credentials, security, TIMEOUT).expect("the share is found");
    assert_eq!(missing.existing_size_bytes, None);
    assert!(!missing.read_only);
    assert!(missing.share_free_bytes > 0 && missing.share_free_bytes <= missing.share_total_bytes);
    smb::create_file(&url, &credentials, security, TIMEOUT).expect("created");
    let on_server = server.share_directory().join("test.bin");
    assert!(on_server.exists());
    // Created only when missing: never replaced.
    let error = smb::create_file(&url, &credentials, security, TIMEOUT).expect_err("exists");
    assert!(error.to_string().contains("left alone"), "{error}");

    let mut options = EngineOptions::new(8, BLOCK);
    options.net_timeout = TIMEOUT;
    options.connections = connections;
    let mut engine =
        SmbEngine::open(&url, &credentials, security, &options, true).expect("the engine opens");
    let facts = engine.session();
    let channels = engine.channels();
    assert_eq!(
        established_connections_to(server.port),
        connections as usize,
        "TCP connections to smbd with the engine open ({channels:?})"
    );
    let written = move_blocks(
        &mut engine,
        Direction::Write,
        8,
        (BLOCK, BLOCKS),
        &mut |_, _| {},
    );
    engine.sync_data().expect("FLUSH");
    let read = read_back_pattern(&mut engine, 8, (BLOCK, BLOCKS));
    let credits = engine.credits();
    assert!(credits.wanted >= 8, "{credits:?}");
    drop(engine);

    let total = (BLOCKS * BLOCK) as u64;
    assert_eq!((written, read), (total, total));
    assert_eq!(
        smb::file_size(&url, &credentials, security, TIMEOUT).unwrap(),
        total
    );
    assert_holds_pattern(&on_server, (BLOCK, BLOCKS));
    smb::remove_file(&url, &credentials, security, TIMEOUT).expect("removed");
    assert!(!on_server.exists());
    (facts, channels)
}

/// A reading engine (4 KiB blocks, `queue_depth`, `timeout`, `connections`) on a new 1 MiB
/// file of zeroes, `f`, in `server`'s share.
fn reader_of_a_new_file(
    server: &SambaServer,
    queue_depth: u32,
    timeout: Duration,
    connections: u32,
) -> SmbEngine {
    std::fs::write(server.share_directory().join("f"), vec![0u8; 1 << 20]).unwrap();
    let url = SmbUrl::parse(&server.url("f")).unwrap();
    let mut options = EngineOptions::new(queue_depth, 4096);
    options.net_timeout = timeout;
    options.connections = connections;
    SmbEngine::open(
        &url,
        &credentials(SAMBA_PASSWORD),
        SmbSecurity::default(),
        &options,
        false,
    )
    .unwrap()
}

#[test]
fn smb_pattern_at_qd8_reads_back_and_matches_the_servers_file_unsigned_and_signed() {
    // SMB 3.0.2: signing only when asked.
    let Some(server) = SambaServer::start(&["server max protocol = SMB3_02"]) else {
        return;
    };
    let plain = round_trip(&server, SmbSecurity::default());
    assert_eq!(plain.dialect, 0x0302, "{plain:?}");
    assert!(!plain.signing && !plain.encryption, "{plain:?}");
    let signed = round_trip(
        &server,
        SmbSecurity {
            sign: true,
            encrypt: false,
        },
    );
    assert!(signed.signing && !signed.encryption, "{signed:?}");
    drop(server);
    // SMB 2.1, unsigned, and signed with HMAC-SHA256.
    let Some(server) = SambaServer::start(&["server max protocol = SMB2_10"]) else {
        return;
    };
    let plain = round_trip(&server, SmbSecurity::default());
    assert!(plain.dialect == 0x0210 && !plain.signing, "{plain:?}");
    assert_eq!(plain.describe(), "SMB 2.1, unsigned");
    let signed = round_trip(
        &server,
        SmbSecurity {
            sign: true,
            encrypt: false,
        },
    );
    assert!(signed.signing && signed.dialect == 0x0210, "{signed:?}");
    assert_eq!(signed.describe(), "SMB 2.1, signed (HMAC-SHA256)");
    // Encryption asked for on SMB 2.1, which has none: refused, naming the flag and dialect.
    let url = SmbUrl::parse(&server.url("test.bin")).unwrap();
    let encrypt = SmbSecurity {
        sign: false,
        encrypt: true,
    };
    let error = smb::find(&url, &credentials(SAMBA_PASSWORD), encrypt, TIMEOUT)
        .expect_err("SMB 2.1 cannot encrypt")
        .to_string();
    assert!(
        error.contains("--smb-encrypt") && error.contains("SMB 2.1"),
        "{error}"
    );
}

/// AES-128-CCM: the only cipher of SMB 3.0 and 3.0.2, and the one a 3.1.1 server without GCM
/// chooses; AES-256 when the server allows nothing else. Each a pattern at QD 8 written, read
/// back and found on the server.
#[test]
fn smb_encryption_with_aes_ccm_and_aes_256() {
    for (protocol, dialect, name) in [("SMB3_00", 0x0300, "3.0"), ("SMB3_02", 0x0302, "3.0.2")] {
        let max_protocol = format!("server max protocol = {protocol}");
        let Some(server) = SambaServer::start(&[&max_protocol, "server smb encrypt = required"])
        else {
            return;
        };
        let sealed = round_trip(&server, SmbSecurity::default());
        assert_eq!(
            (sealed.dialect, sealed.cipher),
            (dialect, Some(Cipher::Aes128Ccm)),
            "{sealed:?}"
        );
        assert!(sealed.encryption && !sealed.signing, "{sealed:?}");
        assert_eq!(
            sealed.describe(),
            format!("SMB {name}, encrypted (AES-128-CCM)")
        );
    }
    let encrypt = SmbSecurity {
        sign: false,
        encrypt: true,
    };
    for (ciphers, expected) in [
        ("AES-128-CCM", Cipher::Aes128Ccm),
        ("AES-256-GCM, AES-256-CCM", Cipher::Aes256Gcm),
        ("AES-256-CCM", Cipher::Aes256Ccm),
    ] {
        let algorithms = format!("server smb3 encryption algorithms = {ciphers}");
        let Some(server) = SambaServer::start(&[&algorithms]) else {
            return;
        };
        let sealed = round_trip(&server, encrypt);
        assert_eq!(
            (sealed.dialect, sealed.cipher),
            (0x0311, Some(expected)),
            "{ciphers}: {sealed:?}"
        );
        assert_eq!(
            sealed.describe(),
            format!("SMB 3.1.1, encrypted ({})", expected.name())
        );
    }
}

#[test]
fn smb_signing_and_encryption_as_the_server_requires() {
    // SMB 3.1.1 always signs a user's session.
    let Some(server) = SambaServer::start(&[]) else {
        return;
    };
    let signed = round_trip(&server, SmbSecurity::default());
    assert!(signed.signing && signed.dialect == 0x0311, "{signed:?}");
    assert_eq!(signed.describe(), "SMB 3.1.1, signed (AES-128-GMAC)");
    drop(server);
    let Some(server) = SambaServer::start(&[
        "server signing = mandatory",
        "server max protocol = SMB3_02",
    ]) else {
        return;
    };
    let signed = round_trip(&server, SmbSecurity::default());
    assert!(signed.signing, "the server requires signing: {signed:?}");
    drop(server);
    let Some(server) = SambaServer::start(&["server smb encrypt = required"]) else {
        return;
    };
    let sealed = round_trip(&server, SmbSecurity::default());
    assert!(
        sealed.encryption,
        "the server requires encryption: {sealed:?}"
    );
}

#[test]
fn smb_encryption_when_asked() {
    let Some(server) = SambaServer::start(&[]) else {
        return;
    };
    let sealed = round_trip(
        &server,
        SmbSecurity {
            sign: false,
            encrypt: true,
        },
    );
    assert!(sealed.encryption && sealed.dialect == 0x0311, "{sealed:?}");
    // GCM is offered first, and Samba prefers it too.
    assert_eq!(sealed.cipher, Some(Cipher::Aes128Gcm), "{sealed:?}");
}

#[test]
fn smb_multichannel_binds_four_connections_to_one_session_signed_and_encrypted() {
    // Samba 4.17 offers multichannel by default (`server multi channel support = yes`).
    let Some(server) = SambaServer::start(&[]) else {
        return;
    };
    let bound = smb::SmbChannels {
        count: 4,
        asked: 4,
        multichannel: true,
    };
    // SMB 3.1.1, signed with AES-128-GMAC: each channel's key from its own preauth hash.
    let (signed, channels) = round_trip_over(&server, SmbSecurity::default(), 4);
    assert!(signed.signing && signed.dialect == 0x0311, "{signed:?}");
    assert_eq!(channels, bound);
    assert_eq!(channels.note(), None);
    // Encrypted: the session's keys, each channel under nonces of its own.
    let encrypt = SmbSecurity {
        sign: false,
        encrypt: true,
    };
    let (sealed, channels) = round_trip_over(&server, encrypt, 4);
    assert!(sealed.encryption, "{sealed:?}");
    assert_eq!(channels, bound);
    drop(server);
    // SMB 3.0.2, unsigned session: the binding is signed anyway (AES-128-CMAC).
    let Some(server) = SambaServer::start(&["server max protocol = SMB3_02"]) else {
        return;
    };
    let (plain, channels) = round_trip_over(&server, SmbSecurity::default(), 4);
    assert_eq!(plain.dialect, 0x0302, "{plain:?}");
    assert_eq!(channels, bound);
    // No more connections than requests in flight (QD 8).
    let (_, channels) = round_trip_over(&server, SmbSecurity::default(), 8);
    assert_eq!(channels.count, 8);
}

#[test]
fn smb_probe_lists_the_servers_interfaces_when_it_offers_multichannel() {
    let Some(server) =
        SambaServer::start(&["interfaces = \"127.0.0.1;speed=10000000000,capability=RSS\""])
    else {
        return;
    };
    let url = SmbUrl::parse(&server.url("f")).unwrap();
    let found = smb::find(
        &url,
        &credentials(SAMBA_PASSWORD),
        SmbSecurity::default(),
        TIMEOUT,
    )
    .unwrap();
    assert!(found.session.multichannel, "{found:?}");
    let described: Vec<String> = found.interfaces.iter().map(|i| i.describe()).collect();
    assert_eq!(described, ["127.0.0.1 at 10 Gbit/s with RSS"], "{found:?}");
}

#[test]
fn smb_without_multichannel_connections_are_independent_sessions() {
    let Some(server) = SambaServer::start(&["server multi channel support = no"]) else {
        return;
    };
    let (facts, channels) = round_trip_over(&server, SmbSecurity::default(), 4);
    assert!(!facts.multichannel, "{facts:?}");
    assert_eq!(
        channels,
        smb::SmbChannels {
            count: 4,
            asked: 4,
            multichannel: false,
        }
    );
    let note = channels.note().expect("a note");
    assert!(
        note.contains("multichannel not offered by the server: 4 independent SMB sessions"),
        "{note}"
    );
    assert_eq!(
        channels.describe(),
        "4 independent sessions per worker (multichannel not offered by the server)"
    );
}

#[test]
fn smb_a_server_that_stops_answering_times_out_over_several_channels() {
    let Some(server) = SambaServer::start(&[]) else {
        return;
    };
    let mut engine = reader_of_a_new_file(&server, 8, Duration::from_secs(2), 4);
    assert!(engine.channels().multichannel);
    server.signal_all(libc::SIGSTOP);
    for slot in 0..8 {
        engine
            .submit(IoRequest {
                slot,
                file: 0,
                direction: Direction::Read,
                offset: u64::from(slot) * 4096,
                length: 4096,
            })
            .unwrap();
    }
    engine.flush().unwrap();
    let started = std::time::Instant::now();
    let mut done = [Completion::default(); 8];
    let error = engine.reap(1, &mut done).expect_err("no reply").to_string();
    let waited = started.elapsed();
    server.signal_all(libc::SIGCONT);
    assert!(
        error.contains("sent no reply within") && error.contains("127.0.0.1"),
        "{error}"
    );
    assert!(
        waited >= Duration::from_secs(2) && waited < Duration::from_secs(10),
        "{waited:?}"
    );
}

#[test]
fn smb_errors_name_the_target_and_the_cause() {
    // Nothing listens.
    let port = support::free_port();
    let unreachable = SmbUrl::parse(&format!("smb://u@127.0.0.1:{port}/share/f")).unwrap();
    let error = smb::find(
        &unreachable,
        &credentials("x"),
        SmbSecurity::default(),
        TIMEOUT,
    )
    .expect_err("nothing listens");
    assert!(error.unreachable, "{error}");
    assert!(
        error.to_string().contains("cannot reach 127.0.0.1"),
        "{error}"
    );

    let Some(server) = SambaServer::start(&[]) else {
        return;
    };
    let url = SmbUrl::parse(&server.url("f")).unwrap();
    let security = SmbSecurity::default();
    let error = smb::find(&url, &credentials("wrong"), security, TIMEOUT)
        .expect_err("wrong password")
        .to_string();
    assert!(
        error.contains("logon failure") && error.contains(SAMBA_USER),
        "{error}"
    );
    assert!(
        !error.contains("wrong\""),
        "the password is never shown: {error}"
    );

    let other = SmbUrl::parse(&format!(
        "smb://{SAMBA_USER}@127.0.0.1:{}/nosuch/f",
        server.port
    ))
    .unwrap();
    let error = smb::find(&other, &credentials(SAMBA_PASSWORD), security, TIMEOUT)
        .expect_err("no such share")
        .to_string();
    assert!(error.contains("has no share 'nosuch'"), "{error}");

    let deep = SmbUrl::parse(&server.url("missing/f")).unwrap();
    let error = smb::find(&deep, &credentials(SAMBA_PASSWORD), security, TIMEOUT)
        .expect_err("no directory")
        .to_string();
    assert!(error.contains("does not exist"), "{error}");

    // A read-only share: found read-only, nothing can be created, and opening for writes is
    // refused with a message, not a panic.
    std::fs::write(server.read_only_directory().join("ro"), vec![1u8; 8192]).unwrap();
    let read_only = SmbUrl::parse(&format!(
        "smb://{SAMBA_USER}@127.0.0.1:{}/{SAMBA_READ_ONLY_SHARE}/ro",
        server.port
    ))
    .unwrap();
    let found = smb::find(&read_only, &credentials(SAMBA_PASSWORD), security, TIMEOUT).unwrap();
    assert!(found.read_only, "{found:?}");
    assert_eq!(found.existing_size_bytes, Some(8192));
    let error = SmbEngine::open(
        &read_only,
        &credentials(SAMBA_PASSWORD),
        security,
        &EngineOptions::new(1, 4096),
        true,
    )
    .expect_err("read-only")
    .to_string();
    assert!(
        error.contains("access denied") || error.contains("read-only"),
        "{error}"
    );
    let mut reader = SmbEngine::open(
        &read_only,
        &credentials(SAMBA_PASSWORD),
        security,
        &EngineOptions::new(1, 4096),
        false,
    )
    .unwrap();
    reader
        .submit(IoRequest {
            slot: 0,
            file: 0,
            direction: Direction::Read,
            offset: 0,
            length: 4096,
        })
        .unwrap();
    reader.flush().unwrap();
    let mut done = [Completion::default(); 1];
    assert_eq!(reader.reap(1, &mut done).unwrap(), 1);
    assert_eq!(done[0].result, 4096);
    assert_eq!(
        std::fs::read(server.read_only_directory().join("ro")).unwrap(),
        vec![1u8; 8192]
    );
}

#[test]
fn smb_a_server_killed_mid_run_fails_the_engine_with_a_message() {
    // One connection, and four channels of one session.
    for connections in [1, 4] {
        let Some(mut server) = SambaServer::start(&[]) else {
            return;
        };
        let mut engine = reader_of_a_new_file(&server, 4, Duration::from_secs(3), connections);
        assert_eq!(engine.channels().count, connections);
        let read = |slot| IoRequest {
            slot,
            file: 0,
            direction: Direction::Read,
            offset: 0,
            length: 4096,
        };
        // A read on every connection first.
        for slot in 0..connections {
            engine.submit(read(slot)).unwrap();
        }
        engine.flush().unwrap();
        let mut done = [Completion::default(); 4];
        let mut reaped = 0;
        while reaped < connections as usize {
            reaped += engine.reap(1, &mut done).unwrap();
        }
        server.kill();
        let outcome = engine
            .submit(read(0))
            .and_then(|()| engine.flush())
            .and_then(|()| engine.reap(1, &mut done));
        let error = outcome.expect_err("the server is gone").to_string();
        assert!(
            error.starts_with("smb:") && error.contains("127.0.0.1"),
            "{connections} connections: {error}"
        );
    }
}

#[test]
fn smb_test_files_are_probed_created_filled_and_removed_through_the_remote_file_seam() {
    use iopath::targets::remote_file::create_test_file;
    use std::sync::atomic::AtomicBool;
    let Some(server) = SambaServer::start(&[]) else {
        return;
    };
    let url = SmbUrl::parse(&server.url("made.bin")).unwrap();
    let credentials = credentials(SAMBA_PASSWORD);
    let security = SmbSecurity::default();
    let error = smb::probe(&url, &credentials, security, None, TIMEOUT).expect_err("missing");
    assert!(error.to_string().contains("give --size"), "{error}");
    let error = smb::probe(&url, &credentials, security, Some(1 << 62), TIMEOUT)
        .expect_err("no room")
        .to_string();
    assert!(error.contains("not enough free space"), "{error}");
    let size = (3 << 20) + 1000;
    let volume = smb::probe(&url, &credentials, security, Some(size), TIMEOUT).unwrap();
    assert!(
        volume.to_create && volume.size_bytes == size && !volume.read_only,
        "{volume:?}"
    );
    assert!(
        volume
            .transfer_sizes
            .is_some_and(|sizes| sizes.write_bytes >= 65536)
    );

    let remote = smb::SmbRemoteFile::find(&url, &credentials, security, TIMEOUT).unwrap();
    let stop = AtomicBool::new(false);
    let file = create_test_file(Box::new(remote), size, 7, &stop)
        .expect("created and filled")
        .expect("not stopped");
    let on_server = server.share_directory().join("made.bin");
    let content = std::fs::read(&on_server).unwrap();
    assert_eq!(content.len() as u64, size);
    assert!(content.iter().filter(|byte| **byte == 0).count() < content.len() / 100);
    let found = smb::probe(&url, &credentials, security, Some(size), TIMEOUT).unwrap();
    assert!(!found.to_create && found.size_bytes == size, "{found:?}");
    // A second exclusive create refuses: the file is never replaced.
    let again = smb::SmbRemoteFile::find(&url, &credentials, security, TIMEOUT).unwrap();
    let error = create_test_file(Box::new(again), 4096, 8, &stop).expect_err("exists");
    assert!(error.problem.contains("the file exists"), "{error}");
    assert_eq!(std::fs::read(&on_server).unwrap(), content);
    file.remove().expect("removed");
    assert!(!on_server.exists());

    // A file another client put in the test file's place is left alone at removal.
    let remote = smb::SmbRemoteFile::find(&url, &credentials, security, TIMEOUT).unwrap();
    let file = create_test_file(Box::new(remote), 8192, 9, &stop)
        .expect("created")
        .expect("not stopped");
    std::fs::remove_file(&on_server).unwrap();
    std::fs::write(&on_server, b"someone else's").unwrap();
    let error = file.remove().expect_err("another file took the name");
    assert!(error.problem.contains("left in place"), "{error}");
    assert_eq!(std::fs::read(&on_server).unwrap(), b"someone else's");

    // A missing file on a read-only share is not offered for creation.
    let read_only = SmbUrl::parse(&format!(
        "smb://{SAMBA_USER}@127.0.0.1:{}/{SAMBA_READ_ONLY_SHARE}/new",
        server.port
    ))
    .unwrap();
    let error = smb::probe(&read_only, &credentials, security, Some(4096), TIMEOUT)
        .expect_err("read-only")
        .to_string();
    assert!(error.contains("read-only"), "{error}");
}
