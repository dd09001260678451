package io.betree;

import java.nio.file.Path;

/**
 * Stored data failed a check: a bad magic number, a checksum mismatch, a truncated block or an
 * impossible value. The message names the file and, where known, the block and its offset. The
 * environment does not repair anything by itself; no data past the damage is guessed at.
 */
public class CorruptionException extends BetreeException {
    private static final long serialVersionUID = 1L;

    /** Logical block number of the damaged block, or -1 when the damage is not in a block. */
    private final long blockNumber;
    /** The damaged file, or {@code null} when unknown. */
    private final transient Path file;

    /** Damage in a specific block of {@code file}. */
    public CorruptionException(Path file, long blockNumber, long offset, String detail) {
        super("corrupted " + file + ", block " + blockNumber + " at offset " + offset + ": " + detail);
        this.file = file;
        this.blockNumber = blockNumber;
    }

    /** Damage in {@code file} that is not tied to one block (a header, for instance). */
    public CorruptionException(Path file, String detail) {
        super("corrupted " + file + ": " + detail);
        this.file = file;
        this.blockNumber = -1;
    }

    /** Damage in {@code file}, not tied to one block, detected through a lower-level error. */
    public CorruptionException(Path file, String detail, Throwable cause) {
        super("corrupted " + file + ": " + detail, cause);
        this.file = file;
        this.blockNumber = -1;
    }

    /** Damage in block {@code blockNumber} of {@code file} found in its contents, not at an offset. */
    public CorruptionException(Path file, long blockNumber, String detail, Throwable cause) {
        super("corrupted " + file + ", block " + blockNumber + ": " + detail, cause);
        this.file = file;
        this.blockNumber = blockNumber;
    }

    /** Damage in {@code file} detected through a lower-level error. */
    public CorruptionException(Path file, long blockNumber, long offset, String detail, Throwable cause) {
        super("corrupted " + file + ", block " + blockNumber + " at offset " + offset + ": " + detail, cause);
        this.file = file;
        this.blockNumber = blockNumber;
    }

    /** The damaged file, or {@code null} when unknown. */
    public Path file() {
        return file;
    }

    /** The damaged block's number, or -1 when the damage is not in a block. */
    public long blockNumber() {
        return blockNumber;
    }
}
