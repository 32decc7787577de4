//! Which targets of a plan the file-operation engines (`filecreate`, `filestat`, …) work on
//! by name: decided once for the whole plan, in one pass over its jobs, so that a job file of
//! hundreds of thousands of files costs no more than its jobs' target lists.

use crate::engine::file_operations::FileOperation;
use crate::workload::Plan;

/// What the jobs using one target do with it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Use {
    /// No job uses it.
    Unused,
    /// Every job using it runs this file operation.
    Operated(FileOperation),
    /// A job moves data on it, or jobs run different operations.
    Other,
}

/// For each target of `plan` (by index), the file operation of every job that uses it when
/// they all run the same one; `None` when no job, or a job moving data, uses it.
pub fn operations_of_targets(plan: &Plan) -> Vec<Option<FileOperation>> {
    let mut uses = vec![Use::Unused; plan.targets.len()];
    for job in plan.tests.iter().flat_map(|test| &test.jobs) {
        let operation = FileOperation::of(job.workload.engine);
        for &index in &job.targets {
            let Some(slot) = uses.get_mut(index) else {
                continue;
            };
            *slot = match (*slot, operation) {
                (Use::Unused, Some(operation)) => Use::Operated(operation),
                (Use::Operated(known), Some(operation)) if known == operation => {
                    Use::Operated(known)
                }
                _ => Use::Other,
            };
        }
    }
    uses.into_iter()
        .map(|found| match found {
            Use::Operated(operation) => Some(operation),
            Use::Unused | Use::Other => None,
        })
        .collect()
}
