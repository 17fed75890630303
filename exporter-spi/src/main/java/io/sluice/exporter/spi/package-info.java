/**
 * The exporter SPI: the only Sluice classes an exporter uses, and the only ones a third-party exporter loaded from
 * its own jar can see (with Agrona and the JDK). Implement {@link io.sluice.exporter.spi.Exporter}; the guide is
 * {@code docs/exporters.md} in the repository: lifecycle, the rule that the sink is written only from inside
 * {@code export} and {@code flush}, acknowledgements, failures and retries, at-least-once delivery, pause semantics.
 * <p>
 * Stable: types and methods are added compatibly (default methods), never changed or removed within a major version.
 */
package io.sluice.exporter.spi;
