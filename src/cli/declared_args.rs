//! `--link`, `--path` and `--shared` as `iopath path` and `iopath explain` take them: the hops
//! a user declares where discovery cannot see, declared once for both commands.

use clap::Args;
use iopath::analysis::DeclaredPath;
use iopath::analysis::declared::DeclaredError;

/// The declared hops of `iopath path` and `iopath explain`.
#[derive(Debug, Args)]
pub struct DeclaredArgs {
    /// Declare the link to the storage where it cannot be seen (a catalog alias such as
    /// 4gfc, 10gbe, 10gbe-9000; `iopath links` lists them). May repeat.
    #[arg(long, value_name = "LINK")]
    pub link: Vec<String>,
    /// Declare hops beyond this host, in order: catalog aliases or NAME:RATE[:IOPS], such as
    /// "pcie3x8,40gbe,array:3.8GB/s". May repeat.
    #[arg(long = "path", value_name = "HOPS")]
    pub hops: Vec<String>,
    /// Declare hops every target of a run passes whatever its route (one switch uplink, one
    /// array), after the others: the same syntax as --path. May repeat.
    #[arg(long, value_name = "HOPS")]
    pub shared: Vec<String>,
}

impl DeclaredArgs {
    /// The hops these flags declare; the error names the value that is not one.
    pub fn declared(&self) -> Result<DeclaredPath, DeclaredError> {
        DeclaredPath::from_flags(&self.link, &self.hops)
            .and_then(|declared| declared.with_shared(&self.shared))
    }
}
