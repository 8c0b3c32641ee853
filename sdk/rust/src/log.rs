//! Leveled logging over the host's `nriwasm.log` import (abi/README.md section 6).
//! The host tags each message with the policy's name and keeps at most
//! [`MAX_MESSAGE`] bytes of it; longer messages are cut here, on a character
//! boundary. Natively (tests) messages go to stderr.

use crate::abi::LogLevel;

/// The longest message the host keeps, in bytes.
pub const MAX_MESSAGE: usize = 4096;

/// Logs one message at `level`.
pub fn log(level: LogLevel, message: &str) {
    emit(level, cut(message));
}

/// The longest prefix of message, cut on a character boundary, that the host keeps.
fn cut(message: &str) -> &str {
    let mut n = message.len().min(MAX_MESSAGE);
    while !message.is_char_boundary(n) {
        n -= 1;
    }
    &message[..n]
}

/// Logs at debug level.
pub fn debug(message: &str) {
    log(LogLevel::Debug, message)
}

/// Logs at info level.
pub fn info(message: &str) {
    log(LogLevel::Info, message)
}

/// Logs at warn level.
pub fn warn(message: &str) {
    log(LogLevel::Warn, message)
}

/// Logs at error level.
pub fn error(message: &str) {
    log(LogLevel::Error, message)
}

#[cfg(target_arch = "wasm32")]
fn emit(level: LogLevel, message: &str) {
    #[link(wasm_import_module = "nriwasm")]
    extern "C" {
        #[link_name = "log"]
        fn host_log(level: u32, ptr: *const u8, length: u32);
    }
    // SAFETY: the host only reads [ptr, ptr+length), which is message.
    unsafe { host_log(level as u32, message.as_ptr(), message.len() as u32) }
}

#[cfg(not(target_arch = "wasm32"))]
fn emit(level: LogLevel, message: &str) {
    let tag = match level {
        LogLevel::Debug => "DEBUG",
        LogLevel::Warn => "WARN",
        LogLevel::Error => "ERROR",
        _ => "INFO",
    };
    eprintln!("{} policy: {}", tag, message);
}

/// Logs a formatted message at debug level: `nriwasm::debug!("{} devices", n)`.
#[macro_export]
macro_rules! debug {
    ($($arg:tt)*) => { $crate::log::debug(&::std::format!($($arg)*)) };
}

/// Logs a formatted message at info level.
#[macro_export]
macro_rules! info {
    ($($arg:tt)*) => { $crate::log::info(&::std::format!($($arg)*)) };
}

/// Logs a formatted message at warn level.
#[macro_export]
macro_rules! warn {
    ($($arg:tt)*) => { $crate::log::warn(&::std::format!($($arg)*)) };
}

/// Logs a formatted message at error level.
#[macro_export]
macro_rules! error {
    ($($arg:tt)*) => { $crate::log::error(&::std::format!($($arg)*)) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_messages_are_cut_on_a_character_boundary() {
        assert_eq!(cut("short"), "short");
        let exact = "x".repeat(MAX_MESSAGE);
        assert_eq!(cut(&exact), exact);
        // "é" is two bytes: the one that would straddle the limit goes whole.
        let straddling = format!("{}é", "x".repeat(MAX_MESSAGE - 1));
        assert_eq!(cut(&straddling), "x".repeat(MAX_MESSAGE - 1));
    }
}
