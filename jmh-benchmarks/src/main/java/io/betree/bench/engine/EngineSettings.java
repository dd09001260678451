package io.betree.bench.engine;

import io.betree.Codec;
import java.util.Objects;

/**
 * The settings every engine gets alike; docs/benchmarks.md says how each engine maps them.
 *
 * @param budgetBytes memory the engine may use for its own cache and write buffers together
 * @param codec block compression (engines that cannot compress take {@link Codec#NONE})
 * @param sync whether every commit is durable (fsync) before it returns
 */
public record EngineSettings(long budgetBytes, Codec codec, boolean sync) {
    /** Validates the settings. */
    public EngineSettings {
        Objects.requireNonNull(codec, "codec");
        if (budgetBytes < (16L << 20)) {
            throw new IllegalArgumentException("budget below 16 MiB: " + budgetBytes);
        }
    }
}
