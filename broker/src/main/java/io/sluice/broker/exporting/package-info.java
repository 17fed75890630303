/**
 * A partition's exporting on this broker: the director that runs the exporters while this replica leads
 * ({@link io.sluice.broker.exporting.ExporterDirector}, one {@link io.sluice.broker.exporting.ExporterContainer} for
 * each exporter), the exporting state as they obey it ({@link io.sluice.broker.exporting.ExportingView}, from the
 * control group's replica through {@link io.sluice.broker.exporting.ExportingStates}) and the gate every export passes
 * ({@link io.sluice.broker.exporting.ExportGate}). It reads the partition through
 * {@link io.sluice.broker.exporting.ExportedState}.
 */
package io.sluice.broker.exporting;
