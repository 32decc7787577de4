//! Targets of one client: the same for every client, templated with the client's identity
//! (`{rank}`, `{host}`, `{local_rank}`, `{size}`), or read from a map file naming each host's
//! targets (device paths differ from host to host).
//!
//! ```
//! use iopath::cluster::templates::{ClientIdentity, expand, targets_from_map};
//!
//! let me = ClientIdentity { rank: 3, size: 4, local_rank: 1, host: "node2".into() };
//! assert_eq!(expand("/scratch/{host}/t{local_rank}-of-{size}", &me), "/scratch/node2/t1-of-4");
//! assert_eq!(expand("nbd://server/export{rank}", &me), "nbd://server/export3");
//!
//! let map = "# host  targets\nnode1 /dev/sdb\nnode2 /dev/nvme0n1 /dev/nvme1n1\n* /tmp/t{rank}\n";
//! assert_eq!(targets_from_map(map, &me).unwrap(), ["/dev/nvme0n1", "/dev/nvme1n1"]);
//! let other = ClientIdentity { host: "node9".into(), ..me };
//! assert_eq!(targets_from_map(map, &other).unwrap(), ["/tmp/t3"]);
//! ```

/// Who a client is in its run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientIdentity {
    /// Its rank, 0 to `size` - 1.
    pub rank: u32,
    /// How many clients the run has.
    pub size: u32,
    /// Its rank among the clients on its host.
    pub local_rank: u32,
    /// Its host name.
    pub host: String,
}

impl ClientIdentity {
    /// The only client of a run from one process on this host.
    pub fn alone(host: String) -> Self {
        ClientIdentity {
            rank: 0,
            size: 1,
            local_rank: 0,
            host,
        }
    }
}

/// Why a map file gives a client no targets.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum MapError {
    /// A line names a host and no target.
    #[error("line {line}: '{host}' has no target after it (a line is: HOST TARGET…)")]
    NoTargets {
        /// Line number, from 1.
        line: usize,
        /// The host named.
        host: String,
    },
    /// Neither the client's host nor `*` has a line.
    #[error("no line for host '{host}' and no '*' line")]
    NoHost {
        /// The client's host.
        host: String,
    },
}

/// `text` with `{rank}`, `{host}`, `{local_rank}` and `{size}` replaced by the client's; any
/// other braces are left as they are.
pub fn expand(text: &str, client: &ClientIdentity) -> String {
    text.replace("{rank}", &client.rank.to_string())
        .replace("{host}", &client.host)
        .replace("{local_rank}", &client.local_rank.to_string())
        .replace("{size}", &client.size.to_string())
}

/// The targets a map file gives the client (templates expanded): the line of its host, or the
/// `*` line when none names it. A line is `HOST TARGET…` (whitespace between); `#` starts a
/// comment; the short host name (before the first dot) matches too.
pub fn targets_from_map(text: &str, client: &ClientIdentity) -> Result<Vec<String>, MapError> {
    let short = client.host.split('.').next().unwrap_or(&client.host);
    let mut fallback = None;
    for (number, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("");
        let mut words = line.split_whitespace();
        let Some(host) = words.next() else {
            continue;
        };
        let targets: Vec<String> = words.map(|word| expand(word, client)).collect();
        if targets.is_empty() {
            return Err(MapError::NoTargets {
                line: number + 1,
                host: host.to_string(),
            });
        }
        if host == client.host || host == short {
            return Ok(targets);
        }
        if host == "*" && fallback.is_none() {
            fallback = Some(targets);
        }
    }
    fallback.ok_or_else(|| MapError::NoHost {
        host: client.host.clone(),
    })
}
