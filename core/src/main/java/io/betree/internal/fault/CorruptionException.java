package io.betree.internal.fault;

import java.nio.file.Path;

/**
 * Stored data failed a check. The message names the file and, where known, the block and its
 * offset; {@link #detail()} is the problem alone, so the public twin can be built from the parts.
 */
public class CorruptionException extends BetreeException {
    private static final long serialVersionUID = 1L;

    private final transient Path file;
    private final long blockNumber;
    private final long offset;
    private final String detail;

    /** Damage in a specific block of {@code file}, at {@code offset}. */
    public CorruptionException(Path file, long blockNumber, long offset, String detail) {
        this(file, blockNumber, offset, detail, null);
    }

    /** Damage in {@code file} that is not tied to one block (a header, for instance). */
    public CorruptionException(Path file, String detail) {
        this(file, -1, -1, detail, null);
    }

    /** Damage in block {@code blockNumber} of {@code file} found in its contents, not at an offset. */
    public CorruptionException(Path file, long blockNumber, String detail, Throwable cause) {
        this(file, blockNumber, -1, detail, cause);
    }

    /**
     * Damage in {@code file}; {@code blockNumber} and {@code offset} are -1 where unknown.
     */
    public CorruptionException(Path file, long blockNumber, long offset, String detail, Throwable cause) {
        super(describe(file, blockNumber, offset, detail), cause);
        this.file = file;
        this.blockNumber = blockNumber;
        this.offset = offset;
        this.detail = detail;
    }

    private static String describe(Path file, long blockNumber, long offset, String detail) {
        return "corrupted " + file + (blockNumber < 0 ? "" : ", block " + blockNumber)
                + (blockNumber < 0 || offset < 0 ? "" : " at offset " + offset) + ": " + detail;
    }

    /** The damaged file, or {@code null} when unknown. */
    public Path file() {
        return file;
    }

    /** The damaged block's number, or -1 when the damage is not in a block. */
    public long blockNumber() {
        return blockNumber;
    }

    /** The damaged block's file offset, or -1 when unknown. */
    public long offset() {
        return offset;
    }

    /** The problem, without the file and block. */
    public String detail() {
        return detail;
    }
}
