//! bfloat16 matrix products on Intel AMX (Advanced Matrix Extensions): eight tile
//! registers of up to 16 rows of 64 bytes, and `tdpbf16ps`, which multiplies a 16 x 32
//! tile of bfloat16 by a 32 x 16 one (stored as 16 rows of 16 pairs) into a 16 x 16 tile
//! of f32 sums. One instruction does 8192 multiply-adds; a core runs about one every 16
//! cycles, some 20 times its AVX-512 float32 rate. Products of bfloat16 values are exact
//! in f32 and the sums are f32, as with the pair product of AVX-512 BF16 (both flush
//! subnormal inputs and results to zero).
//!
//! Linux gives a process the tiles' state (8 KB a thread) only after it asks
//! (`arch_prctl(ARCH_REQ_XCOMP_PERM)`), which [`available`] does once. Rust has no stable
//! intrinsics for AMX, so the instructions are inline assembly. Nothing else in the
//! program touches the tile registers, so they keep their contents from one assembly
//! statement to the next on the same thread: each kernel call configures them first
//! (which zeroes them) and releases them at its end.

use std::arch::asm;
use std::sync::OnceLock;

/// Pairs of a row one `tdpbf16ps` consumes (64 bytes of bfloat16).
pub const TILE_PAIRS: usize = 16;

/// Rows of a tile.
const TILE_ROWS: usize = 16;

/// Whether the CPU has AMX with bfloat16 and the system lets this process use it.
pub fn available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        // CPUID leaf 7: EDX bit 22 is AMX-BF16, bit 24 AMX-TILE.
        let leaf = std::arch::x86_64::__cpuid_count(7, 0);
        leaf.edx >> 22 & 1 == 1 && leaf.edx >> 24 & 1 == 1 && tile_state_granted()
    })
}

/// Asks Linux for the tile state (`ARCH_REQ_XCOMP_PERM` for `XFEATURE_XTILEDATA`); a
/// kernel that predates AMX or withholds it refuses, and the products stay on the
/// vector units.
#[cfg(target_os = "linux")]
fn tile_state_granted() -> bool {
    const ARCH_REQ_XCOMP_PERM: libc::c_long = 0x1023;
    const XFEATURE_XTILEDATA: libc::c_long = 18;
    // SAFETY: the call only changes what the process may use; it reads no memory.
    let granted = unsafe {
        libc::syscall(
            libc::SYS_arch_prctl,
            ARCH_REQ_XCOMP_PERM,
            XFEATURE_XTILEDATA,
        )
    };
    granted == 0
}

/// Elsewhere the tiles are left unused.
#[cfg(not(target_os = "linux"))]
fn tile_state_granted() -> bool {
    false
}

/// The shapes of the eight tiles for a block of `rows` (two tiles of up to 16 rows of
/// `x`) by `columns` (two tiles of up to 16 result columns): tiles 0-3 the results
/// (row tile, column tile), 4-5 the rows of `x`, 6-7 the packed lines of `W`. A tile
/// with no rows or no columns is left unconfigured.
#[repr(C, align(64))]
struct Config {
    palette: u8,
    start_row: u8,
    reserved: [u8; 14],
    bytes_per_row: [u16; 16],
    rows: [u8; 16],
}

impl Config {
    fn new(rows: [usize; 2], columns: [usize; 2]) -> Config {
        let mut config = Config {
            palette: 1,
            start_row: 0,
            reserved: [0; 14],
            bytes_per_row: [0; 16],
            rows: [0; 16],
        };
        let mut set = |tile: usize, rows: usize, bytes: usize| {
            if rows > 0 && bytes > 0 {
                config.rows[tile] = rows as u8;
                config.bytes_per_row[tile] = bytes as u16;
            }
        };
        for (r, &row_count) in rows.iter().enumerate() {
            for (h, &column_count) in columns.iter().enumerate() {
                set(2 * r + h, row_count, 4 * column_count);
            }
            set(4 + r, row_count, 4 * TILE_PAIRS);
        }
        for (h, &column_count) in columns.iter().enumerate() {
            set(6 + h, TILE_PAIRS, 4 * column_count);
        }
        config
    }
}

/// Result columns of one call: two tiles.
pub const MAX_COLUMNS: usize = 32;

/// `c[i * c_stride + j] = x_i . W_j` for the `m` rows `x_i = x[i * x_stride..]` of `pairs`
/// pairs and `columns` (at most [`MAX_COLUMNS`]) rows `W_j` packed in lines: line `p`,
/// at `packed + p * line`, holds pair `p` of each row `j` at `j`. `pairs` is a multiple
/// of [`TILE_PAIRS`].
///
/// # Safety
/// [`available`] returned true; `x` holds `m` rows of `2 pairs` values `x_stride` apart
/// and `packed` `pairs` lines of at least `columns` pairs; `c + i * c_stride + j` for `i < m`, `j < columns` is valid
/// for writes that nothing else reads or writes during the call.
#[allow(clippy::too_many_arguments)]
pub unsafe fn multiply(
    x: *const u16,
    x_stride: usize,
    m: usize,
    packed: *const u32,
    line: usize,
    pairs: usize,
    columns: usize,
    c: *mut f32,
    c_stride: usize,
) {
    debug_assert!(pairs.is_multiple_of(TILE_PAIRS) && columns <= MAX_COLUMNS);
    let half = columns.min(16);
    let column_tiles = [half, columns - half];
    let (x_bytes, c_bytes) = (2 * x_stride, 4 * c_stride);
    let mut configured = None;
    for i in (0..m).step_by(2 * TILE_ROWS) {
        let first = (m - i).min(TILE_ROWS);
        let row_tiles = [first, (m - i - first).min(TILE_ROWS)];
        let same_shape = configured == Some(row_tiles);
        if !same_shape {
            let config = Config::new(row_tiles, column_tiles);
            // SAFETY (all assembly below): the configuration is 64 readable bytes; each
            // load and store covers only the rows and bytes its tile is configured with,
            // which lie inside the operands the caller vouches for, and only configured
            // tiles are used.
            asm!("ldtilecfg [{}]", in(reg) &config, options(nostack, readonly));
            configured = Some(row_tiles);
        }
        let (two_rows, two_columns) = (row_tiles[1] > 0, column_tiles[1] > 0);
        if same_shape {
            // A new configuration zeroes every tile; the same one keeps the last sums.
            asm!("tilezero tmm0", options(nostack, nomem));
            if two_columns {
                asm!("tilezero tmm1", options(nostack, nomem));
            }
            if two_rows {
                asm!("tilezero tmm2", options(nostack, nomem));
                if two_columns {
                    asm!("tilezero tmm3", options(nostack, nomem));
                }
            }
        }
        let rows_x = x.add(i * x_stride);
        for p in (0..pairs).step_by(TILE_PAIRS) {
            let a0 = rows_x.add(2 * p);
            let b0 = packed.add(p * line);
            asm!(
                "tileloadd tmm4, [{a} + {a_stride}*1]",
                "tileloadd tmm6, [{b} + {b_stride}*1]",
                "tdpbf16ps tmm0, tmm4, tmm6",
                a = in(reg) a0,
                a_stride = in(reg) x_bytes,
                b = in(reg) b0,
                b_stride = in(reg) 4 * line,
                options(nostack, readonly)
            );
            if two_columns {
                asm!(
                    "tileloadd tmm7, [{b} + {b_stride}*1]",
                    "tdpbf16ps tmm1, tmm4, tmm7",
                    b = in(reg) b0.add(16),
                    b_stride = in(reg) 4 * line,
                    options(nostack, readonly)
                );
            }
            if two_rows {
                asm!(
                    "tileloadd tmm5, [{a} + {a_stride}*1]",
                    "tdpbf16ps tmm2, tmm5, tmm6",
                    a = in(reg) a0.add(TILE_ROWS * x_stride),
                    a_stride = in(reg) x_bytes,
                    options(nostack, readonly)
                );
                if two_columns {
                    asm!("tdpbf16ps tmm3, tmm5, tmm7", options(nostack, nomem));
                }
            }
        }
        // Stores result tile `$tile` (a literal) at `$at`, rows `c_stride` apart.
        macro_rules! store {
            ($tile:literal, $at:expr) => {
                asm!(
                    concat!("tilestored [{c} + {c_stride}*1], tmm", $tile),
                    c = in(reg) $at,
                    c_stride = in(reg) c_bytes,
                    options(nostack)
                )
            };
        }
        let ci = c.add(i * c_stride);
        store!(0, ci);
        if two_columns {
            store!(1, ci.add(16));
        }
        if two_rows {
            let lower = ci.add(TILE_ROWS * c_stride);
            store!(2, lower);
            if two_columns {
                store!(3, lower.add(16));
            }
        }
    }
    asm!("tilerelease", options(nostack, nomem));
}
