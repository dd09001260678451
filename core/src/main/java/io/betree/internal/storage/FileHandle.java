package io.betree.internal.storage;

import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * An open file of a {@link StorageEnv}, accessed only by position. All methods are safe to call from
 * several threads at once; reads and writes of different ranges proceed in parallel.
 *
 * <p>Durability: data written with {@link #write} may sit in the operating system's cache and be lost
 * in a crash until {@link #sync} returns. The storage layer never assumes that writes reach the disk
 * in the order they were issued, nor that a write is atomic: only what a completed {@code sync}
 * covers is relied on.
 */
public interface FileHandle extends Closeable {

    /** The path this handle was opened with. */
    Path path();

    /**
     * Reads exactly {@code dst.remaining()} bytes starting at {@code position} into {@code dst},
     * advancing its position to its limit.
     *
     * @throws EOFException if the file ends before {@code dst} is full ({@code dst} then holds the
     *     bytes that were there)
     */
    void readFully(ByteBuffer dst, long position) throws IOException;

    /**
     * Writes all remaining bytes of {@code src} at {@code position}, growing the file when needed,
     * and advances the position of {@code src} to its limit. If it throws, any prefix of the bytes
     * may have been written.
     */
    void write(ByteBuffer src, long position) throws IOException;

    /**
     * Makes everything written so far durable, including the file's size after it grew or shrank.
     * After a failed sync the state on disk is unknown: callers must assume earlier writes are lost.
     */
    void sync() throws IOException;

    /** Current size of the file in bytes. */
    long size() throws IOException;

    /** Shrinks the file to {@code size} bytes; does nothing if the file is not larger. */
    void truncate(long size) throws IOException;

    /** Closes the handle. Idempotent. Other handles of the same file are unaffected. */
    @Override
    void close() throws IOException;
}
