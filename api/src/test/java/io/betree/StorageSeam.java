package io.betree;

import io.betree.internal.storage.StorageEnv;

/**
 * The test seam of the public API: hands an environment a file layer of the test's choosing (a
 * fault-injecting or crash-simulating {@link StorageEnv}) without that seam being public API. It
 * ships in this module's test-jar only; system tests depend on that jar.
 */
public final class StorageSeam {
    private StorageSeam() {
    }

    /** {@code options} with the file layer {@code storage} instead of the platform's file system. */
    public static EnvironmentOptions withStorage(EnvironmentOptions options, StorageEnv storage) {
        return options.storage(storage);
    }
}
