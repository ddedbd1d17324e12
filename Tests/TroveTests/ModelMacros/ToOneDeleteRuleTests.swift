import Foundation
import Testing
import Trove
import TroveTestSupport

/// A car holds the key to its engine and its garage; the delete rules are written on the to-one
/// properties, where SwiftData reads them as what deleting the car does to the model named.
@Model final class Car {
    var plate: String
    @Relationship(deleteRule: .cascade) var engine: Engine?
    @Relationship(deleteRule: .deny) var lien: Lien?
    var garage: Garage?

    init(plate: String) { self.plate = plate }
}

@Model final class Engine {
    var serial: String
    init(serial: String) { self.serial = serial }
}

@Model final class Lien {
    var bank: String
    init(bank: String) { self.bank = bank }
}

@Model final class Garage {
    var street: String
    init(street: String) { self.street = street }
}

/// Delete rules declared on to-one properties, with SwiftData's documented semantics as the
/// oracle: `.cascade` deletes the model the property names, `.deny` refuses the delete while it
/// names one, the default (`.nullify`) leaves it.
@Suite("Delete rules of to-one relationships")
@MainActor
struct ToOneDeleteRuleTests {
    func container() throws -> ModelContainer {
        try ModelContainer(
            for: Car.self, Engine.self, Lien.self, Garage.self,
            configurations: ModelConfiguration(isStoredInMemoryOnly: true))
    }

    @Test("cascade deletes the engine with the car; the garage (nullify) stays")
    func cascade() throws {
        let container = try container()
        let context = ModelContext(container)
        let car = Car(plate: "AB-123")
        context.insert(car)
        car.engine = Engine(serial: "E1")
        car.garage = Garage(street: "Mill Lane")
        try context.save()

        let reader = ModelContext(container)
        let saved = try #require(reader.fetch(FetchDescriptor<Car>()).first)
        reader.delete(saved)
        try reader.save()
        let check = ModelContext(container)
        #expect(try check.fetchCount(FetchDescriptor<Car>()) == 0)
        #expect(try check.fetchCount(FetchDescriptor<Engine>()) == 0)
        #expect(try check.fetch(FetchDescriptor<Garage>()).map(\.street) == ["Mill Lane"])
    }

    @Test("deny refuses to delete a car with a lien, and nothing is deleted; without one it goes")
    func deny() throws {
        let container = try container()
        let context = ModelContext(container)
        let car = Car(plate: "CD-456")
        context.insert(car)
        car.engine = Engine(serial: "E2")
        car.lien = Lien(bank: "First Bank")
        try context.save()

        context.delete(car)
        #expect(throws: TroveError.self) { try context.save() }
        context.rollback()
        let check = ModelContext(container)
        #expect(try check.fetchCount(FetchDescriptor<Car>()) == 1)
        #expect(try check.fetchCount(FetchDescriptor<Engine>()) == 1)

        car.lien = nil
        context.delete(car)
        try context.save()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Car>()) == 0)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Lien>()) == 1)
    }
}
