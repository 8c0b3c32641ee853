//! The guest side of the calling convention (abi/README.md section 3), used by
//! [`export_policy!`](crate::export_policy): the request buffer, the response
//! buffer and the one dispatcher a module serves. Not for direct use.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::RefCell;
use std::io::Write;

use crate::dispatch::{Dispatcher, ABI_MAJOR, ABI_MINOR};
use crate::error::Error;
use crate::policy::Policy;

/// A dispatcher with its policy type erased.
pub trait Serve {
    /// Serves one call into `out`.
    fn call(&mut self, method: i32, request: &[u8], out: &mut Vec<u8>);
}

impl<P: Policy> Serve for Dispatcher<P> {
    fn call(&mut self, method: i32, request: &[u8], out: &mut Vec<u8>) {
        self.dispatch_into(method, request, out)
    }
}

/// Builds the module's dispatcher. An invalid Description panics, so the module
/// fails at load time (its first export call) with the reason in its output.
pub fn server<P: Policy + 'static>(make: impl FnOnce() -> P) -> Box<dyn Serve> {
    match Dispatcher::new(make()) {
        Ok(d) => Box::new(d),
        Err(e) => panic!("nriwasm: invalid policy description: {}", e),
    }
}

struct State {
    // The guest-owned request buffer: only ever replaced by a larger one in
    // request_buffer, so it stays valid between calls.
    request: Vec<u8>,
    // The last response; valid until the guest is next entered.
    response: Vec<u8>,
    server: Option<Box<dyn Serve>>,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State { request: Vec::new(), response: Vec::new(), server: None });
}

fn with_server<R>(make: fn() -> Box<dyn Serve>, f: impl FnOnce(&mut State) -> R) -> R {
    STATE.with(|state| {
        let mut state = state.borrow_mut();
        if state.server.is_none() {
            state.server = Some(make());
        }
        f(&mut state)
    })
}

/// `nriwasm_abi_version`: builds the dispatcher (the host calls this first) and
/// answers `major << 16 | minor`.
pub fn abi_version(make: fn() -> Box<dyn Serve>) -> u32 {
    with_server(make, |_| ABI_MAJOR << 16 | ABI_MINOR)
}

/// `nriwasm_request_buffer`: a pointer to a buffer of at least `size` bytes.
pub fn request_buffer(make: fn() -> Box<dyn Serve>, size: u32) -> u32 {
    with_server(make, |state| {
        let size = size as usize;
        if size > state.request.len() {
            state.request = vec![0; size];
        }
        state.request.as_ptr() as usize as u32
    })
}

/// `nriwasm_call`: serves one call from the first `length` bytes of the request
/// buffer and answers the Response's `pointer << 32 | length`.
pub fn call(make: fn() -> Box<dyn Serve>, method: u32, length: u32) -> u64 {
    with_server(make, |state| {
        let State { request, response, server } = state;
        let server = server.as_mut().expect("with_server built the dispatcher");
        let length = length as usize;
        if length > request.len() {
            let e = Error::invalid_argument(
                "",
                format!("request length {} exceeds the request buffer ({} bytes)", length, request.len()),
            );
            let answer = crate::abi::Response { result: Some(crate::abi::response::Result::Error(e.into())) };
            response.clear();
            prost::Message::encode(&answer, response).expect("a Vec grows to fit any message");
        } else {
            server.call(method as i32, &request[..length], response);
        }
        (response.as_ptr() as usize as u64) << 32 | response.len() as u64
    })
}

/// The global allocator [`export_policy!`](crate::export_policy) installs: the
/// system allocator, which on a failed allocation (linear memory at the host's
/// cap) first writes "out of memory" to stderr, so the host reports the failure
/// as memory exhaustion rather than a plain trap (abi/README.md section 7).
pub struct Allocator;

// SAFETY: every method forwards to System with the same arguments.
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        report(System.alloc(layout), layout.size())
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        report(System.alloc_zeroed(layout), layout.size())
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        report(System.realloc(ptr, layout, new_size), new_size)
    }
}

fn report(ptr: *mut u8, size: usize) -> *mut u8 {
    if ptr.is_null() {
        // No allocation here: the message is built on the stack.
        let mut msg = *b"nriwasm: out of memory: an allocation of                      bytes failed\n";
        let mut digits = [0u8; 20];
        let mut n = size;
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        let start = 41;
        msg[start..start + digits.len() - i].copy_from_slice(&digits[i..]);
        let _ = std::io::stderr().write_all(&msg);
    }
    ptr
}
