package io.sluice.gateway;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/** One package a concept, with imports only one way: a cycle between two packages means a concept was split wrong. */
class PackagesFormNoCyclesTest
{
    @Test
    void noTwoPackagesOfTheGatewayDependOnEachOther()
    {
        final JavaClasses classes = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.sluice.gateway");

        slices().matching("io.sluice.gateway.(*)..").should().beFreeOfCycles().check(classes);
    }
}
