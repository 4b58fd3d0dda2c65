//! The in-flight window: packet ids, requests awaiting replies, the queue of
//! requests waiting for a free slot, and their deadlines. Plain data with
//! synchronous methods; time is passed in.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

/// One request, in flight or queued, carrying the caller's payload `T`.
#[derive(Debug)]
pub struct Slot<T> {
    pub payload: T,
    pub queued_at: Instant,
    pub sent_at: Option<Instant>,
    pub deadline: Instant,
}

/// Requests in flight (keyed by packet id) and queued behind the window.
#[derive(Debug)]
pub struct Window<T> {
    limit: usize,
    next_id: u32,
    in_flight: HashMap<u32, Slot<T>>,
    queue: VecDeque<Slot<T>>,
    high_water: usize,
}

impl<T> Window<T> {
    pub fn new(limit: usize) -> Self {
        Self {
            limit: limit.max(1),
            next_id: 1,
            in_flight: HashMap::new(),
            queue: VecDeque::new(),
            high_water: 0,
        }
    }

    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// The most requests that were ever in flight at once.
    pub fn high_water(&self) -> usize {
        self.high_water
    }

    /// Adds a request. Returns the packet id to write now, or `None` when
    /// the window is full and the request waits in the queue.
    pub fn submit(&mut self, payload: T, now: Instant, timeout: Duration) -> Option<u32> {
        let slot = Slot {
            payload,
            queued_at: now,
            sent_at: None,
            deadline: now + timeout,
        };
        if self.in_flight.len() < self.limit && self.queue.is_empty() {
            Some(self.launch(slot, now))
        } else {
            self.queue.push_back(slot);
            None
        }
    }

    fn launch(&mut self, mut slot: Slot<T>, now: Instant) -> u32 {
        let id = self.next_id;
        // Ids wrap but skip 0 and any id still in flight.
        loop {
            self.next_id = self.next_id.wrapping_add(1).max(1);
            if !self.in_flight.contains_key(&self.next_id) {
                break;
            }
        }
        slot.sent_at = Some(now);
        self.in_flight.insert(id, slot);
        self.high_water = self.high_water.max(self.in_flight.len());
        id
    }

    /// Takes the request a reply answers; `None` for an unknown id (a reply
    /// to a request that already timed out).
    pub fn complete(&mut self, id: u32) -> Option<Slot<T>> {
        self.in_flight.remove(&id)
    }

    /// Moves queued requests into free slots; returns the ids to write, with
    /// mutable access to their payloads through `payload_mut`.
    pub fn promote(&mut self, now: Instant) -> Vec<u32> {
        let mut ids = Vec::new();
        while self.in_flight.len() < self.limit {
            let Some(slot) = self.queue.pop_front() else {
                break;
            };
            ids.push(self.launch(slot, now));
        }
        ids
    }

    pub fn payload_mut(&mut self, id: u32) -> Option<&mut T> {
        self.in_flight.get_mut(&id).map(|s| &mut s.payload)
    }

    /// Removes every request, in flight or queued, whose deadline passed.
    pub fn expire(&mut self, now: Instant) -> Vec<Slot<T>> {
        let overdue: Vec<u32> = self
            .in_flight
            .iter()
            .filter(|(_, s)| s.deadline <= now)
            .map(|(id, _)| *id)
            .collect();
        let mut out: Vec<Slot<T>> = overdue
            .into_iter()
            .filter_map(|id| self.in_flight.remove(&id))
            .collect();
        let (late, keep): (VecDeque<_>, VecDeque<_>) =
            self.queue.drain(..).partition(|s| s.deadline <= now);
        self.queue = keep;
        out.extend(late);
        out
    }

    /// Removes everything (the connection is gone).
    pub fn drain(&mut self) -> Vec<Slot<T>> {
        let mut out: Vec<Slot<T>> = self.in_flight.drain().map(|(_, s)| s).collect();
        out.extend(self.queue.drain(..));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Duration = Duration::from_secs(5);

    #[test]
    fn fills_then_queues_then_promotes_in_order() {
        let now = Instant::now();
        let mut w = Window::new(2);
        assert_eq!(w.submit("a", now, T), Some(1));
        assert_eq!(w.submit("b", now, T), Some(2));
        assert_eq!(w.submit("c", now, T), None);
        assert_eq!(w.submit("d", now, T), None);
        assert_eq!(w.complete(1).map(|s| s.payload), Some("a"));
        let ids = w.promote(now);
        assert_eq!(ids, vec![3]);
        assert_eq!(w.payload_mut(3).copied(), Some("c"));
        assert_eq!(w.queued(), 1);
        assert_eq!(w.high_water(), 2);
    }

    #[test]
    fn unknown_reply_ids_are_ignored() {
        let mut w: Window<()> = Window::new(4);
        assert!(w.complete(99).is_none());
    }

    #[test]
    fn expiry_covers_queued_and_in_flight() {
        let now = Instant::now();
        let mut w = Window::new(1);
        w.submit("a", now, Duration::from_millis(10));
        w.submit("b", now, Duration::from_millis(10));
        w.submit("c", now, Duration::from_secs(60));
        let gone: Vec<_> = w
            .expire(now + Duration::from_millis(20))
            .into_iter()
            .map(|s| s.payload)
            .collect();
        assert_eq!(gone, vec!["a", "b"]);
        assert_eq!(w.promote(now), vec![2]);
    }

    #[test]
    fn ids_skip_zero_and_live_ids_on_wrap() {
        let now = Instant::now();
        let mut w = Window::new(4);
        w.next_id = u32::MAX;
        assert_eq!(w.submit((), now, T), Some(u32::MAX));
        assert_eq!(w.submit((), now, T), Some(1));
    }
}
