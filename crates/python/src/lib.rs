//! `mptcp_lab._core`: the campaign runner of the command line, for Python. The Python
//! package (`python/mptcp_lab`) wraps it: `run`, `load`, `sweep` and pandas frames.
//! Simulations run with the GIL released, so other Python threads (a notebook's, a Dask
//! worker's heartbeat) go on meanwhile.

use campaign::{OtherVersions, TaskResult};
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use runner::{BackendKind, Folder, Prepared, Request, ScenarioSource};
use std::path::PathBuf;

create_exception!(
    mptcp_lab,
    ScenarioError,
    PyValueError,
    "A scenario that cannot be loaded: `file`, `line`, `column` (1-based; 0 when the problem \
     has no place in the file), `field` and `message` of the first problem; `errors` lists \
     every problem as (file, line, column, field, message)."
);
create_exception!(
    mptcp_lab,
    RunError,
    PyRuntimeError,
    "A run that could not be done (results folder, backend, a task that failed)."
);

/// An anyhow error as the Python exception a caller can act on.
fn to_py(py: Python<'_>, e: anyhow::Error) -> PyErr {
    let Some(errors) = e.downcast_ref::<scenario::ScenarioErrors>() else {
        return RunError::new_err(format!("{e:#}"));
    };
    let err = ScenarioError::new_err(errors.to_string());
    let set = |value: &Bound<'_, pyo3::exceptions::PyBaseException>| -> PyResult<()> {
        let list: Vec<(String, usize, usize, String, String)> = errors
            .0
            .iter()
            .map(|e| {
                (
                    e.file.display().to_string(),
                    e.line,
                    e.column,
                    e.field.clone(),
                    e.message.clone(),
                )
            })
            .collect();
        if let Some(first) = list.first() {
            value.setattr("file", &first.0)?;
            value.setattr("line", first.1)?;
            value.setattr("column", first.2)?;
            value.setattr("field", &first.3)?;
            value.setattr("message", &first.4)?;
        }
        value.setattr("errors", list)
    };
    match set(err.value(py)) {
        Ok(()) => err,
        Err(e) => e,
    }
}

fn policy(name: &str) -> PyResult<OtherVersions> {
    match name {
        "refuse" => Ok(OtherVersions::Refuse),
        "rerun" => Ok(OtherVersions::Rerun),
        "reuse" => Ok(OtherVersions::Reuse),
        other => Err(PyValueError::new_err(format!(
            "other_versions={other:?}: expected \"refuse\", \"rerun\" or \"reuse\""
        ))),
    }
}

/// What a worker needs to plan the same tasks: the scenario's text (workers need not
/// share the client's files) and the request.
#[derive(Clone, Debug, FromPyObject, IntoPyObject)]
#[pyo3(from_item_all)]
struct TaskSpec {
    text: String,
    file: String,
    seeds: u32,
    set: Vec<String>,
    backend: String,
    duration: Option<String>,
}

impl TaskSpec {
    fn request(&self) -> anyhow::Result<Request> {
        let mut request = Request::new(BackendKind::parse(&self.backend)?, self.seeds);
        request.set.clone_from(&self.set);
        request.duration.clone_from(&self.duration);
        Ok(request)
    }

    fn prepare(&self, folder: Folder) -> anyhow::Result<Prepared> {
        let file = PathBuf::from(&self.file);
        Prepared::new(
            ScenarioSource::Text {
                text: &self.text,
                file: &file,
            },
            self.request()?,
            folder,
        )
    }
}

/// A scenario planned as a campaign in its results folder.
#[pyclass(module = "mptcp_lab._core", frozen)]
struct Campaign {
    spec: TaskSpec,
    prepared: Prepared,
}

#[pymethods]
impl Campaign {
    #[new]
    #[pyo3(signature = (scenario, seeds, set, backend, duration=None, out=None))]
    fn new(
        py: Python<'_>,
        scenario: PathBuf,
        seeds: u32,
        set: Vec<String>,
        backend: String,
        duration: Option<String>,
        out: Option<PathBuf>,
    ) -> PyResult<Self> {
        let text = scenario::load::read_file(&scenario).map_err(|e| to_py(py, e.into()))?;
        let spec = TaskSpec {
            text,
            file: scenario.display().to_string(),
            seeds,
            set,
            backend,
            duration,
        };
        let folder = out.map_or(Folder::Default, Folder::At);
        let prepared = spec.prepare(folder).map_err(|e| to_py(py, e))?;
        Ok(Campaign { spec, prepared })
    }

    /// The results folder.
    #[getter]
    fn out(&self) -> PathBuf {
        self.prepared.out().to_path_buf()
    }

    /// Every task: (index, key, variant, seed).
    fn tasks(&self) -> Vec<(usize, String, String, u64)> {
        let plan = &self.prepared.plan;
        plan.tasks
            .iter()
            .enumerate()
            .map(|(i, t)| {
                (
                    i,
                    t.key.to_string(),
                    plan.scenario(t).variant_name().to_string(),
                    t.seed,
                )
            })
            .collect()
    }

    /// Refuses a results folder that is not writable or not this program's, and runs that
    /// would not fit in memory `jobs` at a time.
    fn check(&self, py: Python<'_>, jobs: usize) -> PyResult<()> {
        self.prepared.check(jobs).map_err(|e| to_py(py, e))
    }

    /// Indices of the tasks without a result (under `other_versions`).
    fn missing(&self, py: Python<'_>, other_versions: &str) -> PyResult<Vec<usize>> {
        let status = self
            .prepared
            .status(policy(other_versions)?)
            .map_err(|e| to_py(py, e))?;
        Ok(status.missing)
    }

    /// Runs the tasks `todo` here, `jobs` at a time, saving each as it finishes; the GIL is
    /// released meanwhile. Ctrl-C (KeyboardInterrupt) is seen between rounds of `jobs`
    /// tasks; what finished is kept.
    fn run(&self, py: Python<'_>, todo: Vec<usize>, jobs: usize) -> PyResult<()> {
        let jobs = jobs.max(1);
        for round in todo.chunks(jobs) {
            py.detach(|| self.prepared.run(round, jobs))
                .map_err(|e| to_py(py, e))?;
            py.check_signals()?;
        }
        Ok(())
    }

    /// Saves a result returned by `run_task` (a worker's); returns its task index.
    fn save(&self, py: Python<'_>, result: &[u8]) -> PyResult<usize> {
        let task = TaskResult::decode(result).map_err(|e| to_py(py, e))?;
        self.prepared.save(&task).map_err(|e| to_py(py, e))
    }

    /// Builds summary.json and the series from the task results in the folder.
    fn summarize(&self, py: Python<'_>, other_versions: &str) -> PyResult<()> {
        let policy = policy(other_versions)?;
        py.detach(|| self.prepared.summarize(policy))
            .map(|_| ())
            .map_err(|e| to_py(py, e))
    }

    /// What `run_task` needs, as plain Python values (picklable for Dask).
    fn spec<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.spec.clone().into_pyobject(py)
    }
}

/// Runs task `index` of the campaign `spec` (a `Campaign.spec()`), which must have key
/// `key` here too (the same scenario and build), and returns its result for
/// `Campaign.save`, without writing anything. The GIL is released while it runs.
#[pyfunction]
fn run_task<'py>(
    py: Python<'py>,
    spec: TaskSpec,
    index: usize,
    key: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    let prepared = spec.prepare(Folder::Default).map_err(|e| to_py(py, e))?;
    match prepared.plan.tasks.get(index) {
        Some(t) if t.key.to_string() == key => {}
        _ => {
            return Err(RunError::new_err(format!(
                "task {index} with key {key} is not a task of this scenario on mptcp-lab {}: \
                 does every worker run the same build as the client?",
                campaign::VERSION
            )));
        }
    }
    let result = py
        .detach(|| prepared.run_detached(index))
        .map_err(|e| to_py(py, e))?;
    Ok(PyBytes::new(py, &result.encode()))
}

/// The scenario file `path` as the loader resolves it with `set` (`KEY=VALUE` strings), as
/// the JSON text of one file of `mptcp-lab check --json` (docs/scenario-format.md); raises
/// ScenarioError when it does not validate.
#[pyfunction]
fn check(py: Python<'_>, path: PathBuf, set: Vec<String>) -> PyResult<String> {
    py.detach(|| runner::resolved::resolved_file(&path, &set).map(|file| file.to_json()))
        .map_err(|e| to_py(py, e))
}

/// Writes report.md (with its plots) and report.html for a results folder; returns report.md.
#[pyfunction]
fn write_report(py: Python<'_>, dir: PathBuf) -> PyResult<PathBuf> {
    py.detach(|| report::write_report(&dir))
        .map_err(|e| to_py(py, e))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("VERSION", campaign::VERSION)?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("RunError", m.py().get_type::<RunError>())?;
    m.add_class::<Campaign>()?;
    m.add_function(wrap_pyfunction!(run_task, m)?)?;
    m.add_function(wrap_pyfunction!(write_report, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    Ok(())
}
