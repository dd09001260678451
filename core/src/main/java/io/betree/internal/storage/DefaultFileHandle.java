package io.betree.internal.storage;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.locks.ReentrantLock;

/**
 * {@link FileHandle} over a {@link FileChannel}, using positional reads and writes so that threads
 * never contend for a shared file position.
 *
 * <p>A {@code FileChannel} closes itself for everyone when any thread using it is interrupted. This
 * handle hides that: the interrupted thread gets its {@link ClosedByInterruptException}, and the
 * channel is reopened transparently for all other callers. Only {@link #close()} ends the handle.
 *
 * <p>{@link #sync()} calls {@code force(true)}. {@code force(false)} maps to {@code fdatasync} on
 * Linux, which does persist a grown file size, but the Java contract promises nothing about
 * metadata with {@code false}, and the block file appends and then points a durable header at the
 * appended bytes; a lost size would lose them. Syncs are rare (once per checkpoint), so the
 * portable, certainly-correct choice costs almost nothing.
 */
final class DefaultFileHandle implements FileHandle {

    private final Path path;
    private volatile FileChannel channel;
    private volatile boolean closed;
    /** Guards reopening and closing the channel; a lock, not a monitor, since both do I/O. */
    private final ReentrantLock reopen = new ReentrantLock();

    /** Opens (creating if absent) {@code path} for reading and writing. */
    DefaultFileHandle(Path path) throws IOException {
        this.path = path;
        this.channel = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE,
                StandardOpenOption.CREATE);
    }

    @Override
    public Path path() {
        return path;
    }

    @Override
    public void readFully(ByteBuffer dst, long position) throws IOException {
        if (position < 0) {
            throw new IllegalArgumentException("negative position " + position);
        }
        long pos = position;
        while (dst.hasRemaining()) {
            FileChannel ch = channel();
            int n;
            try {
                n = ch.read(dst, pos);
            } catch (ClosedByInterruptException e) {
                throw e;
            } catch (ClosedChannelException e) {
                retryUnlessClosed(e);
                continue;
            }
            if (n < 0) {
                throw new EOFException(path + ": end of file at offset " + pos + " while reading "
                        + dst.remaining() + " more bytes from offset " + position);
            }
            pos += n;
        }
    }

    @Override
    public void write(ByteBuffer src, long position) throws IOException {
        if (position < 0) {
            throw new IllegalArgumentException("negative position " + position);
        }
        long pos = position;
        while (src.hasRemaining()) {
            FileChannel ch = channel();
            try {
                pos += ch.write(src, pos);
            } catch (ClosedByInterruptException e) {
                throw e;
            } catch (ClosedChannelException e) {
                retryUnlessClosed(e);
            }
        }
    }

    @Override
    public void sync() throws IOException {
        while (true) {
            FileChannel ch = channel();
            try {
                ch.force(true);
                return;
            } catch (ClosedByInterruptException e) {
                throw e;
            } catch (ClosedChannelException e) {
                retryUnlessClosed(e);
            }
        }
    }

    @Override
    public long size() throws IOException {
        while (true) {
            FileChannel ch = channel();
            try {
                return ch.size();
            } catch (ClosedByInterruptException e) {
                throw e;
            } catch (ClosedChannelException e) {
                retryUnlessClosed(e);
            }
        }
    }

    @Override
    public void truncate(long size) throws IOException {
        while (true) {
            FileChannel ch = channel();
            try {
                ch.truncate(size);
                return;
            } catch (ClosedByInterruptException e) {
                throw e;
            } catch (ClosedChannelException e) {
                retryUnlessClosed(e);
            }
        }
    }

    @Override
    public void close() throws IOException {
        FileChannel ch;
        reopen.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            ch = channel;
        } finally {
            reopen.unlock();
        }
        ch.close();
    }

    @Override
    public String toString() {
        return "FileHandle[" + path + "]";
    }

    /** The open channel, reopened if another thread's interrupt closed it. */
    private FileChannel channel() throws IOException {
        FileChannel ch = channel;
        if (ch.isOpen()) {
            return ch;
        }
        reopen.lock();
        try {
            if (closed) {
                throw new ClosedChannelException();
            }
            if (!channel.isOpen()) {
                // No CREATE: if the file vanished meanwhile, failing beats silently starting anew.
                channel = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
            }
            return channel;
        } finally {
            reopen.unlock();
        }
    }

    /** Rethrows {@code e} if this handle was closed; otherwise the caller retries on a new channel. */
    private void retryUnlessClosed(ClosedChannelException e) throws IOException {
        if (closed) {
            throw e;
        }
        if (Thread.currentThread().isInterrupted() && !(e instanceof AsynchronousCloseException)) {
            throw new ClosedByInterruptException();
        }
    }
}
