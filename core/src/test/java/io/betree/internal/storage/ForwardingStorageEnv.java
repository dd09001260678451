package io.betree.internal.storage;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * A {@link StorageEnv} that passes every call to another one; test wrappers extend it and override
 * only the calls they observe or change.
 */
public abstract class ForwardingStorageEnv implements StorageEnv {
    /** The wrapped file layer. */
    protected final StorageEnv delegate;

    protected ForwardingStorageEnv(StorageEnv delegate) {
        this.delegate = delegate;
    }

    @Override
    public FileHandle open(Path path) throws IOException {
        return delegate.open(path);
    }

    @Override
    public boolean exists(Path path) {
        return delegate.exists(path);
    }

    @Override
    public void delete(Path path) throws IOException {
        delegate.delete(path);
    }

    @Override
    public void rename(Path source, Path target) throws IOException {
        delegate.rename(source, target);
    }

    @Override
    public List<Path> list(Path dir) throws IOException {
        return delegate.list(dir);
    }

    @Override
    public void createDirectories(Path dir) throws IOException {
        delegate.createDirectories(dir);
    }

    @Override
    public void syncDirectory(Path dir) throws IOException {
        delegate.syncDirectory(dir);
    }

    @Override
    public Closeable lock(Path lockFile) throws IOException {
        return delegate.lock(lockFile);
    }
}
