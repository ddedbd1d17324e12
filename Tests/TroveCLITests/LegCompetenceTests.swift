import Foundation
import Testing
import TroveEmbeddings
import TroveTestSupport

@testable import TroveCLI

/// Which model speaks for which text, with the real all-MiniLM-L6-v2 vocabulary.
@Suite("LegCompetence", .enabled(if: installedModel != nil))
struct LegCompetenceTests {
    @Test(
        "English reads as English; Spanish, German, French, Hindi in Latin script, Chinese and Japanese do not"
    )
    func english() throws {
        let tokenizer = try BERTEmbedder(modelDirectory: try #require(installedModel)).tokenizer
        for english in [
            "my mother's tamale recipe with roasted poblano strips",
            "what to pack for the school museum outing in May",
            "Car insurance renews Aug 1 with Belair: $1,842 a year.", "setlist",
            "costumes for the play",
            "Traditions to keep: a Día de Muertos altar every year with photos of the grandparents.",
        ] {
            #expect(LegCompetence.readsAsEnglish(english, tokenizer: tokenizer), "\(english)")
        }
        for other in [
            "¿cuándo le toca la vacuna de la rabia a la perra?",
            "Bis wann müssen die Winterreifen aufs Auto?",
            "Combien coûte l'appareil dentaire de Mateo ?",
            "gaadi ka insurance kab renew karna hai?",
            "孩子的护照续签需要准备什么？", "同僚がすすめたラーメン屋はどこ？",
            "Priya ki rajma: rajma raat bhar bhigo do, pressure cooker mein 6 seeti",
        ] {
            #expect(!LegCompetence.readsAsEnglish(other, tokenizer: tokenizer), "\(other)")
        }
    }

    @Test(
        "multilingual and unknown models are always competent; MiniLM needs the query and the note in English"
    )
    func perModel() throws {
        let minilm = try BERTEmbedder(modelDirectory: try #require(installedModel))
        let other = HashingEmbedder()
        let spanish = LegCompetence(
            query: "¿dónde está la receta de tamales?", embedders: [minilm, other])
        #expect(spanish.queryCompetent == [false, true])
        #expect(!spanish.isCompetent(model: 0, content: "Tamales recipe"))
        #expect(spanish.isCompetent(model: 1, content: "Tamales recipe"))
        let english = LegCompetence(
            query: "where is the tamale recipe", embedders: [minilm, other])
        #expect(english.isCompetent(model: 0, content: "The tamale recipe is in the blue folder."))
        #expect(
            !english.isCompetent(model: 0, content: "Tamales de rajas de mamá: masa para tamales."))
    }
}
