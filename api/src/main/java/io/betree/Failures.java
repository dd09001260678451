package io.betree;

import io.betree.internal.fault.BetreeIOException;
import io.betree.internal.fault.CorruptionException;
import io.betree.internal.fault.DirectoryInUseException;
import io.betree.internal.fault.EnvironmentFailedException;
import io.betree.internal.txn.WriteConflictException;

/**
 * Turns the engine's internal failures ({@code io.betree.internal.fault} and the transaction
 * layer's conflict) into their public twins at the API boundary: the same message, the underlying
 * cause (itself translated when it is internal), and the original stack trace, so that a trace
 * still shows where in the engine the failure happened.
 */
final class Failures {
    private Failures() {
    }

    /** The public exception for {@code e}. */
    static io.betree.BetreeException translate(io.betree.internal.fault.BetreeException e) {
        Throwable cause = publicCause(e.getCause());
        io.betree.BetreeException out;
        if (e instanceof CorruptionException c) {
            out = corruption(c, cause);
        } else if (e instanceof BetreeIOException io) {
            out = new io.betree.BetreeIOException(io.operation(), io.ioCause());
        } else if (e instanceof WriteConflictException) {
            out = new io.betree.WriteConflictException(e.getMessage());
        } else if (e instanceof DirectoryInUseException) {
            out = new io.betree.DirectoryInUseException(e.getMessage());
        } else if (e instanceof EnvironmentFailedException) {
            out = new io.betree.EnvironmentFailedException(e.getMessage(), cause);
        } else {
            out = new io.betree.BetreeException(e.getMessage(), cause);
        }
        out.setStackTrace(e.getStackTrace());
        for (Throwable s : e.getSuppressed()) {
            out.addSuppressed(publicCause(s));
        }
        return out;
    }

    private static io.betree.CorruptionException corruption(CorruptionException c, Throwable cause) {
        if (c.blockNumber() < 0) {
            return new io.betree.CorruptionException(c.file(), c.detail(), cause);
        }
        if (c.offset() < 0) {
            return new io.betree.CorruptionException(c.file(), c.blockNumber(), c.detail(), cause);
        }
        return new io.betree.CorruptionException(c.file(), c.blockNumber(), c.offset(), c.detail(), cause);
    }

    private static Throwable publicCause(Throwable t) {
        return t instanceof io.betree.internal.fault.BetreeException internal ? translate(internal) : t;
    }
}
