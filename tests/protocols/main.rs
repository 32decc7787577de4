//! Integration tests of the protocol engines and `iopath net`: the real binary against real
//! servers (smbd, nfs-ganesha, nbdkit, qemu-nbd, tgtd) on loopback or in network namespaces
//! each test creates, and scripted servers that misbehave. One module per protocol.

#[path = "../support/mod.rs"]
mod support;

mod iscsi;
mod nas;
mod nbd;
mod net;
mod nfs_run;
mod smb;
mod smb_run;
