package io.betree.systest;

import io.betree.internal.storage.FileHandle;
import io.betree.internal.storage.StorageEnv;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A {@link StorageEnv} wrapper that can be fenced off for good: every later call through it, or
 * through a handle it opened, fails with an {@link IOException} ("fenced"). An in-process crash
 * simulation ({@code FaultInjectingStorageEnv.crash()}) kills open handles but leaves the crashed
 * environment's threads running; without a fence they could still create, rename and delete files
 * (a log roll or a segment deletion under way) on the "restarted" file system, which a real power cut
 * would have prevented. {@link #fenceAndThen} waits for calls in progress (they happened before the
 * power cut), fences, then runs the crash.
 */
final class FencedStorageEnv implements StorageEnv {
    private final StorageEnv delegate;
    private final ReentrantReadWriteLock gate = new ReentrantReadWriteLock();
    private volatile boolean fenced;

    FencedStorageEnv(StorageEnv delegate) {
        this.delegate = delegate;
    }

    /** An action that may throw an I/O exception. */
    interface IoAction {
        void run() throws IOException;
    }

    /** Waits for calls in progress, fences every later call, then runs {@code crash}. */
    void fenceAndThen(IoAction crash) throws IOException {
        gate.writeLock().lock();
        try {
            fenced = true;
            crash.run();
        } finally {
            gate.writeLock().unlock();
        }
    }

    private interface IoCall<T> {
        T call() throws IOException;
    }

    private void passAction(IoAction action) throws IOException {
        pass(() -> {
            action.run();
            return null;
        });
    }

    private <T> T pass(IoCall<T> call) throws IOException {
        gate.readLock().lock();
        try {
            if (fenced) {
                throw new IOException("fenced: the simulated machine crashed");
            }
            return call.call();
        } finally {
            gate.readLock().unlock();
        }
    }

    @Override
    public FileHandle open(Path path) throws IOException {
        FileHandle h = pass(() -> delegate.open(path));
        return new FencedHandle(h);
    }

    @Override
    public boolean exists(Path path) {
        return delegate.exists(path);
    }

    @Override
    public void delete(Path path) throws IOException {
        passAction(() -> delegate.delete(path));
    }

    @Override
    public void rename(Path source, Path target) throws IOException {
        passAction(() -> delegate.rename(source, target));
    }

    @Override
    public List<Path> list(Path dir) throws IOException {
        return pass(() -> delegate.list(dir));
    }

    @Override
    public void createDirectories(Path dir) throws IOException {
        passAction(() -> delegate.createDirectories(dir));
    }

    @Override
    public void syncDirectory(Path dir) throws IOException {
        passAction(() -> delegate.syncDirectory(dir));
    }

    @Override
    public Closeable lock(Path lockFile) throws IOException {
        Closeable lock = pass(() -> delegate.lock(lockFile));
        return () -> {
            if (!fenced) {
                lock.close();
            }
        };
    }

    private final class FencedHandle implements FileHandle {
        private final FileHandle h;

        FencedHandle(FileHandle h) {
            this.h = h;
        }

        @Override
        public Path path() {
            return h.path();
        }

        @Override
        public void readFully(ByteBuffer dst, long position) throws IOException {
            passAction(() -> h.readFully(dst, position));
        }

        @Override
        public void write(ByteBuffer src, long position) throws IOException {
            passAction(() -> h.write(src, position));
        }

        @Override
        public void sync() throws IOException {
            passAction(() -> h.sync());
        }

        @Override
        public long size() throws IOException {
            return pass(h::size);
        }

        @Override
        public void truncate(long size) throws IOException {
            passAction(() -> h.truncate(size));
        }

        @Override
        public void close() throws IOException {
            if (!fenced) {
                h.close();
            }
        }
    }
}
