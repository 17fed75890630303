package io.sluice.broker.exporting;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** Passing the export gate: what a pause's answer waits for. */
class ExportGateTest
{
    private final ExportGate gate = new ExportGate();

    @Test
    void aFreeGateIsPassedAtOnce()
    {
        assertThat(gate.awaitPassed()).isDone();
    }

    @Test
    @Timeout(10)
    void aGateTakenByAnExportIsPassedWhenThatExportLeavesItWithoutBlockingTheWaiter() throws Exception
    {
        final GateHeldElsewhere exporter = GateHeldElsewhere.enter(gate);

        final CompletableFuture<Void> first = gate.awaitPassed();
        final CompletableFuture<Void> second = gate.awaitPassed();
        assertThat(first).as("the export is still inside").isNotDone();

        exporter.exit();
        first.get(5, TimeUnit.SECONDS);
        second.get(5, TimeUnit.SECONDS);
        assertThat(gate.awaitPassed()).isDone();
    }
}
