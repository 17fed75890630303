package io.sluice.broker;

import io.sluice.protocol.tls.TlsModeProbe;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * The TLS mode probe of a broker's peers ({@link TlsModeProbe}) run beside the start's in-memory setup (issue 30): it
 * takes a TLS handshake's worth of cold JDK code, up to {@link TlsModeProbe#DEFAULT_BUDGET} with a silent peer, and
 * only what is written afterwards must wait for it. Thread-safe.
 */
final class PeerModeCheck
{
    private final CompletableFuture<Long> tookMs;
    private final StartPhases phases;
    private boolean awaited;

    private PeerModeCheck(final CompletableFuture<Long> tookMs, final StartPhases phases)
    {
        this.tookMs = tookMs;
        this.phases = phases;
    }

    /** Starts probing {@code peers} on a daemon thread of its own. */
    static PeerModeCheck start(
        final int nodeId, final boolean tlsEnabled, final List<TlsModeProbe.Peer> peers, final StartPhases phases)
    {
        final CompletableFuture<Long> tookMs = new CompletableFuture<>();
        final Thread thread = new Thread(() ->
        {
            final long startNs = System.nanoTime();
            try
            {
                TlsModeProbe.check(tlsEnabled, "broker " + nodeId, peers, TlsModeProbe.DEFAULT_BUDGET);
                tookMs.complete((System.nanoTime() - startNs) / 1_000_000);
            }
            catch (final RuntimeException | Error e)
            {
                tookMs.completeExceptionally(e);
            }
        }, "broker-" + nodeId + "-tls-mode-probe");
        thread.setDaemon(true);
        thread.start();
        return new PeerModeCheck(tookMs, phases);
    }

    /**
     * Waits for the probe (bounded by its budget); throws what it found, as {@code TlsModeProbe.check} would have.
     * Once done, again returns at once. Called on the start's thread only.
     */
    void await()
    {
        if (awaited)
        {
            return;
        }
        final long took;
        try
        {
            took = tookMs.get();
        }
        catch (final InterruptedException e)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while probing the peers' TLS mode", e);
        }
        catch (final ExecutionException e)
        {
            if (e.getCause() instanceof RuntimeException failure)
            {
                throw failure;
            }
            if (e.getCause() instanceof Error error)
            {
                throw error;
            }
            throw new CompletionException(e.getCause());
        }
        awaited = true;
        phases.mark("TLS mode probe awaited (it took " + took + " ms)");
    }
}
