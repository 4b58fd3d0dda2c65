//! Long tool calls as MCP tasks: the `io.modelcontextprotocol/tasks`
//! extension (SEP-2663), run by rmcp's [`TaskManager`].
//!
//! A call whose route says it runs long (a wait for an event, a dump that
//! suspends, a heap walk, a reload that compiles) becomes a task when the
//! client declared the extension: the reply is a task handle at once, the
//! client polls `tasks/get`, whose status message carries the call's
//! progress, and the result is the tool's reply, exactly as a plain call
//! would have returned it. Every other client gets the plain call.
//!
//! Cancelling (`tasks/cancel`, or `notifications/cancelled` naming the
//! request that created the task) reaches the tool through the same
//! task-local as a cancelled plain call, so each tool undoes what it did
//! as it does for a plain call: a wait stops, a dump resumes what it
//! suspended, a heap walk starts no further walk, a compile kills javac
//! before anything reaches the JVM. A task the tool ended that way is
//! `cancelled`; one that had already finished keeps its result.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::FutureExt;
use futures::future::BoxFuture;
use rmcp::ErrorData;
use rmcp::model::{CallToolResult, ContentBlock, DetailedTask, RequestId, Task};
use rmcp::task_manager::{TaskContext, TaskExit, TaskManager, TaskOptions};

use crate::actors::lock;

/// How long a task and then its result are kept. The longest call that
/// runs as a task is a wait of 600 s; an hour leaves the client time to
/// come back for the result. rmcp aborts a task still running past it.
const TTL_MS: u64 = 3_600_000;

/// How often a client is asked to poll.
const POLL_MS: u64 = 500;

/// The label of a reply saying the tool stopped because it was cancelled.
const CANCELLED: &str = "[CANCELLED]";

/// The tasks of one server, and which request created each.
#[derive(Clone, Default)]
pub struct Tasks {
    manager: TaskManager,
    /// Request id → task id, so `notifications/cancelled` for the request
    /// that created a task cancels the task.
    by_request: Arc<Mutex<HashMap<RequestId, String>>>,
}

/// What the running call needs from the server: its cancellation and
/// progress scope, set around the tool call.
pub struct Running {
    /// Resolves when the task is cancelled.
    pub cancel: futures::future::Shared<BoxFuture<'static, ()>>,
    /// The task, for its status message.
    pub task: TaskContext,
}

impl Tasks {
    /// Starts `run` as a task created by `request`; returns the handle for
    /// the reply. `run` gets what the call needs to know of its task.
    pub fn spawn<F>(&self, request: RequestId, tool: &str, run: F) -> Task
    where
        F: FnOnce(Running) -> BoxFuture<'static, CallToolResult> + Send + 'static,
    {
        let options = TaskOptions::new()
            .with_ttl_ms(TTL_MS)
            .with_poll_interval_ms(POLL_MS)
            .with_status_message(format!("{tool} started"));
        let task = self.manager.spawn(options, move |context| {
            let signal = context.clone();
            let cancel: BoxFuture<'static, ()> = Box::pin(async move { signal.cancelled().await });
            let running = Running {
                cancel: cancel.shared(),
                task: context.clone(),
            };
            Box::pin(async move {
                let result = run(running).await;
                settle(&context, result)
            })
        });
        let mut by_request = lock(&self.by_request);
        // Forget requests whose task has ended and been swept.
        by_request.retain(|_, id| self.manager.get_task(id).is_ok());
        by_request.insert(request, task.task_id.clone());
        task
    }

    /// `tasks/get`.
    pub fn get(&self, task_id: &str) -> Result<DetailedTask, ErrorData> {
        self.manager.get_task(task_id)
    }

    /// `tasks/update`: no call of ours asks the client for input, so any
    /// response is ignored, as the extension says of unknown keys.
    pub fn update(
        &self,
        task_id: &str,
        responses: impl IntoIterator<Item = (String, serde_json::Value)>,
    ) -> Result<(), ErrorData> {
        self.manager.update_task(task_id, responses)
    }

    /// `tasks/cancel`.
    pub fn cancel(&self, task_id: &str) -> Result<(), ErrorData> {
        self.manager.cancel_task(task_id)
    }

    /// `notifications/cancelled` for a request: cancels the task it
    /// created, if it created one. A plain call's cancellation is rmcp's.
    pub fn cancel_request(&self, request: &RequestId) {
        let task = lock(&self.by_request).remove(request);
        if let Some(task) = task {
            let _ = self.manager.cancel_task(&task);
        }
    }

    /// Ends every task still running (the server is going away): each is
    /// aborted, as the process's exit would.
    pub fn shutdown(&self) {
        self.manager.shutdown();
    }
}

/// The task's outcome from the tool's reply: a reply saying the tool
/// stopped on a cancellation makes the task `cancelled` (its words kept as
/// the status message); anything else is the task's result, even after a
/// cancel that came too late to stop it.
fn settle(context: &TaskContext, result: CallToolResult) -> Result<CallToolResult, TaskExit> {
    if context.is_cancel_requested()
        && result.is_error == Some(true)
        && let Some(text) = first_text(&result).filter(|t| t.starts_with(CANCELLED))
    {
        context.set_status_message(text);
        return Err(TaskExit::Cancelled);
    }
    Ok(result)
}

fn first_text(result: &CallToolResult) -> Option<String> {
    result
        .content
        .iter()
        .find_map(ContentBlock::as_text)
        .map(|t| t.text.clone())
}
