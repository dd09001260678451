package io.betree.internal.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * A {@link FileHandle} of {@link FaultInjectingStorageEnv}: asks the env which faults to inject and
 * records every change in the file's {@link FileShadow} so that a crash can undo it. Dead after the
 * env crashed: every call then fails with "simulated crash".
 */
final class FaultInjectingFileHandle implements FileHandle {

    private final FaultInjectingStorageEnv env;
    private final FileHandle delegate;
    private final FileShadow shadow;
    private final int generation;
    private boolean dead;
    private boolean closed;

    FaultInjectingFileHandle(FaultInjectingStorageEnv env, FileHandle delegate, FileShadow shadow, int generation) {
        this.env = env;
        this.delegate = delegate;
        this.shadow = shadow;
        this.generation = generation;
    }

    @Override
    public Path path() {
        return delegate.path();
    }

    @Override
    public void readFully(ByteBuffer dst, long position) throws IOException {
        synchronized (env) {
            checkAlive();
            env.checkRead(path());
            delegate.readFully(dst, position);
        }
    }

    @Override
    public void write(ByteBuffer src, long position) throws IOException {
        synchronized (env) {
            checkAlive();
            int length = src.remaining();
            long size = delegate.size();
            FaultInjectingStorageEnv.WritePlan plan = env.planWrite(path(), position, length, size);
            int keep = plan.keepBytes();
            if (keep > 0) {
                byte[] data = new byte[keep];
                src.duplicate().get(data);
                int oldLength = (int) Math.max(0, Math.min(position + keep, size) - position);
                ByteBuffer old = ByteBuffer.allocate(oldLength);
                delegate.readFully(old, position);
                delegate.write(ByteBuffer.wrap(data), position);
                shadow.recordWrite(position, data, old.array(), size);
                src.position(src.position() + keep);
            }
            if (plan.failure() != null) {
                throw new IOException(plan.failure());
            }
        }
    }

    @Override
    public void sync() throws IOException {
        synchronized (env) {
            checkAlive();
            env.checkSync(path());
            delegate.sync();
            shadow.synced();
        }
    }

    @Override
    public long size() throws IOException {
        synchronized (env) {
            checkAlive();
            return delegate.size();
        }
    }

    @Override
    public void truncate(long size) throws IOException {
        synchronized (env) {
            checkAlive();
            long before = delegate.size();
            if (size >= before) {
                return;
            }
            ByteBuffer removed = ByteBuffer.allocate((int) (before - size));
            delegate.readFully(removed, size);
            delegate.truncate(size);
            shadow.recordTruncate(size, removed.array(), before);
            env.released(before - size);
        }
    }

    @Override
    public void close() throws IOException {
        synchronized (env) {
            if (closed) {
                return;
            }
            closed = true;
            env.closed(this);
            if (!dead) {
                delegate.close();
            }
        }
    }

    /** Called by the env when it crashes: closes the real handle and fails every later call. */
    void kill() throws IOException {
        dead = true;
        delegate.close();
    }

    private void checkAlive() throws IOException {
        if (dead || generation != env.crashCount()) {
            throw new IOException("simulated crash: " + path() + " is no longer open");
        }
        if (closed) {
            throw new java.nio.channels.ClosedChannelException();
        }
    }

    @Override
    public String toString() {
        return "FaultInjectingFileHandle[" + path() + "]";
    }
}
