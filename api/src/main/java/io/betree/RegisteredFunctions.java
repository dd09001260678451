package io.betree;

import io.betree.internal.tree.UpdateFunctions;
import java.util.Map;

/**
 * The update functions of {@link EnvironmentOptions}, as the engine's trees call them by name.
 * Immutable and thread-safe, as the registered functions must be.
 */
final class RegisteredFunctions implements UpdateFunctions {
    private final Map<String, UpdateFunction> byName;

    RegisteredFunctions(Map<String, UpdateFunction> byName) {
        this.byName = byName;
    }

    @Override
    public byte[] apply(String name, byte[] key, byte[] oldValue, byte[] argument) {
        UpdateFunction f = byName.get(name);
        if (f == null) {
            throw UpdateFunctions.unknown(name);
        }
        byte[] value = f.apply(key, oldValue, argument);
        if (value != null && value.length > Index.MAX_VALUE_BYTES) {
            throw new IllegalStateException("update function \"" + name + "\" returned " + value.length
                    + " bytes, past the limit of " + Index.MAX_VALUE_BYTES);
        }
        return value;
    }

    @Override
    public boolean knows(String name) {
        return byName.containsKey(name);
    }
}
