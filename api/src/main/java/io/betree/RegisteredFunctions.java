package io.betree;

import io.betree.internal.tree.UpdateFunctions;
import java.time.InstantSource;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The update functions of {@link EnvironmentOptions}, as the engine's trees call them by name, and
 * its clock, which row expiry is read against. Immutable and thread-safe, as the registered
 * functions and the clock must be.
 */
final class RegisteredFunctions implements UpdateFunctions {
    private final Map<String, UpdateFunction> byName;
    /** Calls that threw where an update met its value, and so changed nothing. */
    private final AtomicLong failedCalls = new AtomicLong();

    private final InstantSource clock;

    RegisteredFunctions(Map<String, UpdateFunction> byName, InstantSource clock) {
        this.byName = byName;
        this.clock = clock;
    }

    @Override
    public long nowMillis() {
        return clock.millis();
    }

    @Override
    public byte[] apply(String name, byte[] key, byte[] oldValue, byte[] argument) {
        UpdateFunction f = byName.get(name);
        if (f == null) {
            throw UpdateFunctions.unknown(name);
        }
        byte[] value = f.apply(key, oldValue, argument);
        if (value != null && value.length > Index.MAX_VALUE_BYTES) {
            throw new IllegalArgumentException("update function \"" + name + "\" returned " + value.length
                    + " bytes, past the limit of " + Index.MAX_VALUE_BYTES);
        }
        // A copy: the function may return an array it keeps (a constant, its argument).
        return value == null ? null : value.clone();
    }

    @Override
    public void failed(String name, byte[] key, Throwable failure) {
        failedCalls.incrementAndGet();
    }

    /** Calls that threw where an update met its value, since the environment opened. */
    long failedCalls() {
        return failedCalls.get();
    }

    @Override
    public boolean knows(String name) {
        return byName.containsKey(name);
    }
}
