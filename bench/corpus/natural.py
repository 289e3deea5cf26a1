"""A natural-text multi-hop corpus (HotpotQA-style): hand-written Wikipedia-style paragraphs about
real, well-known entities, two-hop "bridge" and "comparison" questions, and distractor passages
that share words with the questions (other films of a series, other people born somewhere, other
universities of the same city, ...). Distractors are shared between questions; all passages of all
questions form one pool.

    generate(seed) -> (passages [(title, text)], questions [{question, answer, kind, support}])

The same shape as multihop.generate. Every paragraph and every fact was written by hand from
general knowledge (no text was copied from Wikipedia; no data set was downloaded), so a fact may
be imprecise, but each answer string occurs literally in its supporting passage, and (checked by
`python bench/corpus/natural.py`) in no passage that is not a supporting passage of its question.

A bridge question names entity A; the passage about A names entity B (sometimes by an alias, as
Wikipedia does: "Mozart" for "Wolfgang Amadeus Mozart", "Moscow State University" for
"Lomonosov Moscow State University"); the answer is in the passage about B, which shares few
words with the question. A comparison question names two entities; the answer is one of them.
`seed` only shuffles the passage order.
"""

from __future__ import annotations

import random

# (title, text). Grouped by topic; the first sentence names the title subject.
FILMS = [
    ("Jaws (film)",
     "Jaws is a 1975 American thriller film directed by Steven Spielberg and based on the 1974 novel by "
     "Peter Benchley. It stars Roy Scheider as police chief Martin Brody, who, with the help of a marine "
     "biologist and a professional shark hunter, hunts a man-eating great white shark that attacks "
     "beachgoers at a summer resort town. Shot largely on Martha's Vineyard, the production ran far over "
     "schedule and budget, but the film became the highest-grossing picture of its time and is often "
     "called the first summer blockbuster."),
    ("Steven Spielberg",
     "Steven Allan Spielberg (born December 18, 1946) is an American filmmaker and one of the central "
     "figures of the New Hollywood era. Born in Cincinnati, Ohio, he grew up mostly in Phoenix, Arizona, "
     "and in Saratoga, California, and made amateur war movies as a teenager. After the television film "
     "Duel he turned to features; his films include Close Encounters of the Third Kind, E.T. the "
     "Extra-Terrestrial, Jurassic Park and Schindler's List, which won him his first Academy Award."),
    ("Jaws 2",
     "Jaws 2 is a 1978 American thriller film directed by Jeannot Szwarc and the first sequel to Jaws "
     "(1975). Roy Scheider reprises his role as police chief Martin Brody, who suspects that another great "
     "white shark is terrorizing the resort town of Amity Island. The director of the first film declined "
     "to return, and Szwarc replaced John D. Hancock after filming had begun. For a few years it was the "
     "highest-grossing sequel ever made."),
    ("Jeannot Szwarc",
     "Jeannot Szwarc (born November 21, 1939) is a French film and television director. Born in Paris, he "
     "moved to the United States and directed episodes of series such as Ironside, Night Gallery and Kojak "
     "before turning to feature films. His films include Bug (1975), Jaws 2 (1978), the romantic fantasy "
     "Somewhere in Time (1980) and Supergirl (1984); he later returned to television, directing episodes "
     "of Smallville, Bones and many other series."),
    ("Jaws: The Revenge",
     "Jaws: The Revenge is a 1987 American thriller film produced and directed by Joseph Sargent. It is the "
     "fourth and final film in the Jaws franchise and stars Lorraine Gary as Ellen Brody, the widow of the "
     "police chief of the earlier films, who believes that a great white shark is pursuing her family for "
     "revenge. Much of it was shot in the Bahamas. The film was panned by critics and is often listed "
     "among the worst films ever made."),
    ("Jaws 3-D",
     "Jaws 3-D is a 1983 American thriller film directed by Joe Alves and starring Dennis Quaid, Bess "
     "Armstrong and Louis Gossett Jr. The third film in the Jaws series, it follows a great white shark "
     "that enters an underwater park at SeaWorld in Florida. Alves, who had been the production designer "
     "of the first two films, made his debut as a director with it, and the film was released in 3D "
     "during a brief revival of the format in the early 1980s."),
    ("Jaws (novel)",
     "Jaws is a 1974 novel by the American writer Peter Benchley. It tells the story of a great white shark "
     "that preys upon a small Long Island resort town and of the three men who attempt to kill it. "
     "Benchley expanded an old idea about a shark hunt into a manuscript for Doubleday, and the book stayed "
     "on the bestseller list for many months. A year later it was adapted into a film, for which Benchley "
     "co-wrote the screenplay with Carl Gottlieb."),
    ("Peter Benchley",
     "Peter Bradford Benchley (May 8, 1940 - February 11, 2006) was an American author and screenwriter. "
     "Born in New York City, he was the son of the writer Nathaniel Benchley and the grandson of the "
     "humorist Robert Benchley. He is best known for the novel Jaws and co-wrote the screenplay of its "
     "film adaptation; his later novels include The Deep and The Island. In later life he became an "
     "advocate of marine conservation and of the protection of sharks."),
    ("Roy Scheider",
     "Roy Richard Scheider (November 10, 1932 - February 10, 2008) was an American actor. Born in Orange, "
     "New Jersey, he was a boxer in his youth before studying at Franklin & Marshall College. He played "
     "police chief Martin Brody in Jaws (1975) and Jaws 2 (1978), and received Academy Award nominations "
     "for The French Connection and All That Jazz. He later led the science fiction television series "
     "seaQuest DSV."),
    ("Duel (1971 film)",
     "Duel is a 1971 American action thriller television film directed by Steven Spielberg and written by "
     "Richard Matheson from his own short story. Dennis Weaver plays a travelling salesman pursued along "
     "remote California highways by the mostly unseen driver of a menacing tanker truck. It first aired "
     "as an ABC Movie of the Week, and its success led to a longer theatrical release abroad that launched "
     "the young director's career in feature films."),
    ("The Godfather",
     "The Godfather is a 1972 American crime film directed by Francis Ford Coppola, who co-wrote the "
     "screenplay with Mario Puzo, based on Puzo's 1969 novel of the same name. It stars Marlon Brando and "
     "Al Pacino as the leaders of the Corleone family, a powerful New York crime family, and follows the "
     "transformation of the youngest son, Michael, from reluctant outsider to ruthless boss. It won the "
     "Academy Award for Best Picture and is regarded as one of the greatest films ever made."),
    ("Francis Ford Coppola",
     "Francis Ford Coppola (born April 7, 1939) is an American filmmaker and a leading figure of the New "
     "Hollywood movement. He was born in Detroit, Michigan, to the flautist Carmine Coppola and Italia "
     "Pennino, and was raised in Queens, New York, where a bout of polio kept him in bed for a year. After "
     "studying theatre at Hofstra University and film at UCLA, he won five Academy Awards; his other films "
     "include The Conversation, Apocalypse Now and Bram Stoker's Dracula."),
    ("The Godfather Part II",
     "The Godfather Part II is a 1974 American crime film produced and directed by Francis Ford Coppola. "
     "Partly based on the 1969 novel by Mario Puzo, it is both a sequel and a prequel to the 1972 film: it "
     "follows Michael Corleone as the new head of the family, while flashbacks show the young Vito "
     "Corleone, played by Robert De Niro, arriving in New York in the early twentieth century. It won six "
     "Academy Awards, including Best Picture, the first sequel to do so."),
    ("The Godfather (novel)",
     "The Godfather is a crime novel by the American author Mario Puzo. Published by G. P. Putnam's Sons in "
     "1969, it tells the story of a fictional Mafia family in New York City headed by Vito Corleone, and "
     "of his son Michael's rise to power after an attempt on his father's life. The novel spent more than "
     "a year on the New York Times bestseller list, introduced phrases such as 'an offer he can't refuse', "
     "and was adapted into a 1972 film."),
    ("Mario Puzo",
     "Mario Gianluigi Puzo (October 15, 1920 - July 2, 1999) was an American author and screenwriter. Born "
     "in the Hell's Kitchen neighborhood of Manhattan to a poor family of Italian immigrants, he served in "
     "the Second World War and wrote pulp stories before his novels about the Mafia made him famous. He "
     "co-wrote the screenplays of the three Godfather films with their director, and also co-wrote "
     "Superman (1978)."),
    ("Apocalypse Now",
     "Apocalypse Now is a 1979 American epic war film directed, produced and co-written by Francis Ford "
     "Coppola. Set during the Vietnam War and loosely based on Joseph Conrad's novella Heart of Darkness, "
     "it follows Captain Benjamin Willard, played by Martin Sheen, on a secret mission up a river into "
     "Cambodia to kill a renegade colonel played by Marlon Brando. Its troubled production in the "
     "Philippines became legendary, and it shared the Palme d'Or at Cannes."),
    ("Marlon Brando",
     "Marlon Brando Jr. (April 3, 1924 - July 1, 2004) was an American actor. Born in Omaha, Nebraska, he "
     "studied with the acting teacher Stella Adler in New York and became famous in A Streetcar Named "
     "Desire and On the Waterfront, for which he won his first Academy Award. He won a second Oscar for "
     "playing Vito Corleone in The Godfather, but declined it in protest at Hollywood's depiction of "
     "Native Americans."),
    ("Goodfellas",
     "Goodfellas is a 1990 American biographical crime film directed by Martin Scorsese and based on the "
     "1985 nonfiction book Wiseguy by Nicholas Pileggi. It stars Robert De Niro, Ray Liotta and Joe Pesci "
     "and narrates the rise and fall of the mob associate Henry Hill and his friends from 1955 to 1980. "
     "Pesci won the Academy Award for Best Supporting Actor, and the film is often ranked among the best "
     "crime films ever made."),
    ("Martin Scorsese",
     "Martin Charles Scorsese (born November 17, 1942) is an American filmmaker. Born in Flushing, Queens, "
     "in New York City, and raised in Little Italy in Manhattan, he studied film at New York University. "
     "His films, often about Italian-American identity, guilt and violence, include Mean Streets, Taxi "
     "Driver, Raging Bull and Goodfellas, and he won the Academy Award for Best Director for The Departed "
     "in 2007."),
    ("Sofia Coppola",
     "Sofia Carmina Coppola (born May 14, 1971) is an American filmmaker and former actress. The daughter "
     "of the director of The Godfather, she appeared as an infant in that film and played Mary Corleone "
     "in The Godfather Part III (1990). As a director she made The Virgin Suicides, Lost in Translation, "
     "for which she won the Academy Award for Best Original Screenplay, and Marie Antoinette."),
    ("Blade Runner",
     "Blade Runner is a 1982 science fiction film directed by Ridley Scott and written by Hampton Fancher "
     "and David Peoples. Loosely based on Philip K. Dick's 1968 novel Do Androids Dream of Electric Sheep?, "
     "it stars Harrison Ford as Rick Deckard, a police officer in a rain-soaked Los Angeles of 2019 who "
     "hunts bioengineered androids known as replicants. It did poorly at the box office but later became "
     "a cult film and a model for cyberpunk."),
    ("Philip K. Dick",
     "Philip Kindred Dick (December 16, 1928 - March 2, 1982) was an American science fiction writer. Born "
     "in Chicago, he moved with his family to California as a small child and spent most of his life in "
     "the San Francisco Bay Area. He wrote 44 novels and about 120 short stories exploring altered states "
     "of mind, monopolistic corporations and what it means to be human; The Man in the High Castle won "
     "the Hugo Award in 1963."),
    ("Blade Runner 2049",
     "Blade Runner 2049 is a 2017 American science fiction film directed by Denis Villeneuve and written "
     "by Hampton Fancher and Michael Green. A sequel to the 1982 film, it stars Ryan Gosling as K, a "
     "replicant blade runner who uncovers a secret that leads him to the retired Rick Deckard, played "
     "again by Harrison Ford. Despite critical praise it lost money, and it won Academy Awards for "
     "cinematography and visual effects."),
    ("Ridley Scott",
     "Sir Ridley Scott (born 30 November 1937) is an English film director and producer. Born in South "
     "Shields, he studied at the Royal College of Art in London and directed thousands of television "
     "commercials before his first feature, The Duellists. His science fiction films Alien (1979) and "
     "Blade Runner (1982) were followed by Thelma & Louise, Gladiator, which won the Academy Award for "
     "Best Picture, and The Martian."),
    ("Denis Villeneuve",
     "Denis Villeneuve (born October 3, 1967) is a Canadian filmmaker. Born in Becancour, Quebec, he "
     "studied communications at the Universite du Quebec a Montreal and first gained attention with the "
     "French-language films Maelstrom and Incendies. His English-language films include Prisoners, "
     "Sicario, Arrival, Blade Runner 2049 and the two-part adaptation of Frank Herbert's novel Dune."),
    ("Do Androids Dream of Electric Sheep?",
     "Do Androids Dream of Electric Sheep? is a dystopian science fiction novel by the American writer "
     "Philip K. Dick, first published in 1968. Set in a post-apocalyptic San Francisco, where most animals "
     "have died out and owning a live one is a sign of status, it follows the bounty hunter Rick Deckard "
     "as he tracks down six escaped androids. The novel was the basis of a 1982 film and of a later "
     "comic-book adaptation."),
    ("Total Recall (1990 film)",
     "Total Recall is a 1990 American science fiction action film directed by Paul Verhoeven and starring "
     "Arnold Schwarzenegger, Sharon Stone and Rachel Ticotin. Loosely based on the 1966 short story 'We "
     "Can Remember It for You Wholesale' by Philip K. Dick, it follows a construction worker who buys "
     "implanted memories of a trip to Mars and finds that his life may be a lie. It won a special "
     "Academy Award for its visual effects."),
    ("Minority Report (film)",
     "Minority Report is a 2002 American science fiction action film directed by Steven Spielberg and "
     "loosely based on the 1956 novella 'The Minority Report' by Philip K. Dick. Set in Washington, D.C., "
     "in 2054, it stars Tom Cruise as the chief of a police unit that arrests murderers before they commit "
     "their crimes, using the visions of three psychics, until he is himself accused of a future murder."),
    ("Neuromancer",
     "Neuromancer is a 1984 science fiction novel by the American-Canadian writer William Gibson. Set in a "
     "near-future dystopia, it follows Case, a washed-up computer hacker hired for one last job in "
     "cyberspace, a word Gibson had coined a few years earlier. It was the first novel to win the Nebula "
     "Award, the Philip K. Dick Award and the Hugo Award, and it became the founding text of the cyberpunk "
     "genre."),
]

MUSIC = [
    ("Abbey Road",
     "Abbey Road is the eleventh studio album by the English rock band the Beatles, released on 26 "
     "September 1969 by Apple Records. Named after the London street where EMI Studios stood, it was the "
     "last album the group recorded together, although Let It Be was released later. Side two closes with "
     "a long medley of song fragments, and the cover photograph of the four members walking across a "
     "zebra crossing is one of the most imitated images in popular music."),
    ("The Beatles",
     "The Beatles were an English rock group that emerged from Liverpool in 1960, comprising John Lennon, "
     "Paul McCartney, George Harrison and Ringo Starr. Rooted in skiffle, beat and 1950s rock and roll, "
     "they led the Merseybeat scene, conquered the United States in 1964 and later experimented with "
     "classical music, studio effects and Indian instruments. They are regarded as the most influential "
     "act of the twentieth century and the best-selling music act of all time."),
    ("Abbey Road Studios",
     "Abbey Road Studios is a recording studio at 3 Abbey Road, St John's Wood, in the City of "
     "Westminster, London. It was established in November 1931 by the Gramophone Company, a predecessor "
     "of EMI, and was known as EMI Studios until 1970, when it was renamed after the album the Beatles had "
     "recorded there. Pink Floyd, the Hollies and many film orchestras have also recorded in its rooms, "
     "and it became a listed building in 2010."),
    ("Let It Be (album)",
     "Let It Be is the twelfth and final studio album by the English rock band the Beatles, released on 8 "
     "May 1970, almost a month after the group's break-up. Most of it was recorded in January 1969 for a "
     "documentary film about the band at work, and the tapes were later reworked by the producer Phil "
     "Spector, to the displeasure of Paul McCartney. It includes 'Get Back', 'The Long and Winding Road' "
     "and the title track."),
    ("The Rolling Stones",
     "The Rolling Stones are an English rock band formed in London in 1962. Active across seven decades, "
     "they are one of the most popular and enduring bands of the rock era, and they pioneered the "
     "rebellious image of the hard rock group. The early line-up included Mick Jagger, Keith Richards, "
     "Brian Jones, Bill Wyman and Charlie Watts, and their albums include Beggars Banquet, Let It Bleed, "
     "Sticky Fingers and Exile on Main St."),
    ("Pink Floyd",
     "Pink Floyd are an English rock band formed in London in 1965. Gaining an early following as one of "
     "the first British psychedelic groups, they were distinguished by long compositions, philosophical "
     "lyrics and elaborate live shows. Founding members Syd Barrett, Nick Mason, Roger Waters and Richard "
     "Wright were joined by the guitarist David Gilmour in 1968, and their 1973 album The Dark Side of the "
     "Moon, recorded at Abbey Road Studios, is one of the best-selling albums ever."),
    ("The Kinks",
     "The Kinks were an English rock band formed in Muswell Hill, north London, in 1963 by the brothers "
     "Ray and Dave Davies. Their distorted guitar riff on 'You Really Got Me' in 1964 influenced hard rock "
     "and heavy metal, and Ray Davies's later songs, such as 'Waterloo Sunset', offered gentle satire of "
     "English life. A dispute with the American musicians' union kept the band from touring the United "
     "States for four years."),
    ("Sgt. Pepper's Lonely Hearts Club Band",
     "Sgt. Pepper's Lonely Hearts Club Band is the eighth studio album by the English rock band the "
     "Beatles, released on 26 May 1967. Recorded at EMI Studios over some five months with the producer "
     "George Martin, it presented the band as a fictional Edwardian military band and is often cited as "
     "a landmark of the album era. It spent 27 weeks at the top of the British chart and won four Grammy "
     "Awards, including Album of the Year."),
    ("Queen (band)",
     "Queen are a British rock band formed in London in 1970 by Freddie Mercury, Brian May and Roger "
     "Taylor, who were joined by the bassist John Deacon in 1971. Their music drew on progressive rock, "
     "hard rock and heavy metal, and later on arena anthems, and their performance at Live Aid in 1985 is "
     "often ranked among the greatest in rock history. They are among the best-selling music artists in "
     "the world."),
    ("The Who",
     "The Who are an English rock band formed in London in 1964. Their classic line-up consisted of the "
     "singer Roger Daltrey, the guitarist Pete Townshend, the bassist John Entwistle and the drummer Keith "
     "Moon. Known for destroying their instruments on stage, they were also pioneers of the rock opera "
     "with Tommy (1969) and Quadrophenia (1973), and their single 'My Generation' became an anthem of the "
     "mod movement."),
    ("The Magic Flute",
     "The Magic Flute (German: Die Zauberflote) is an opera in two acts by Mozart to a German libretto by "
     "Emanuel Schikaneder. It premiered on 30 September 1791 at Schikaneder's Theater auf der Wieden in "
     "Vienna, barely two months before the composer's early death. The work is a Singspiel, a popular form "
     "that mixes singing and spoken dialogue, and the Queen of the Night's vengeance aria is one of the "
     "best-known arias in the operatic repertoire."),
    ("Wolfgang Amadeus Mozart",
     "Wolfgang Amadeus Mozart (27 January 1756 - 5 December 1791) was a prolific and influential composer "
     "of the Classical period. Born in Salzburg, then the capital of a prince-archbishopric of the Holy "
     "Roman Empire, he showed prodigious ability from early childhood and toured the courts of Europe "
     "with his father Leopold and his sister Nannerl. He later settled in Vienna, where he wrote "
     "symphonies, piano concertos, chamber music and operas, and he died there at the age of 35."),
    ("Don Giovanni",
     "Don Giovanni is an opera in two acts with music by Wolfgang Amadeus Mozart and an Italian libretto "
     "by Lorenzo Da Ponte. It is based on the legend of Don Juan, a young nobleman who seduces and "
     "deceives women until the statue of a man he has killed drags him down to hell. The opera premiered "
     "at the Estates Theatre in Prague on 29 October 1787 and is often counted among the greatest operas "
     "ever composed."),
    ("The Marriage of Figaro",
     "The Marriage of Figaro (Italian: Le nozze di Figaro) is an opera buffa in four acts composed in 1786 "
     "by Wolfgang Amadeus Mozart, with an Italian libretto by Lorenzo Da Ponte based on a stage comedy by "
     "Pierre Beaumarchais. It tells how the servants Figaro and Susanna succeed in marrying despite the "
     "efforts of their employer, Count Almaviva. It premiered at the Burgtheater in Vienna on 1 May 1786."),
    ("Emanuel Schikaneder",
     "Emanuel Schikaneder (1 September 1751 - 21 September 1812) was a German impresario, dramatist, "
     "actor, singer and composer. Born in Straubing in Bavaria, he toured with travelling theatre troupes "
     "before taking over the Theater auf der Wieden in Vienna. He wrote the libretto of The Magic Flute "
     "and sang the role of the bird-catcher Papageno at its premiere, and he later built the larger "
     "Theater an der Wien."),
    ("The Magic Flute (1975 film)",
     "The Magic Flute (Swedish: Trollflojten) is a 1975 Swedish television film directed by Ingmar Bergman "
     "and based on the opera by Mozart. Sung in Swedish, it presents the work as a performance in a "
     "replica of the eighteenth-century court theatre of Drottningholm Palace, with frequent shots of the "
     "faces of the audience and of the singers backstage. First broadcast on New Year's Day, it was later "
     "released in cinemas and was nominated for an Academy Award for its costumes."),
    ("Ingmar Bergman",
     "Ernst Ingmar Bergman (14 July 1918 - 30 July 2007) was a Swedish film director, screenwriter and "
     "theatre director. Born in Uppsala, the son of a Lutheran minister, he directed more than sixty films "
     "and documentaries for cinema and television and some 170 plays. His films, among them The Seventh "
     "Seal, Wild Strawberries, Persona and Fanny and Alexander, deal with death, faith, illness and "
     "madness, and he spent his last years on the island of Faro."),
    ("Fidelio",
     "Fidelio is Ludwig van Beethoven's only opera. Its German libretto, prepared at first by Joseph "
     "Sonnleithner from a French play, tells how Leonore, disguised as a prison guard named Fidelio, "
     "rescues her husband Florestan from death in a political prison. The first version premiered at the "
     "Theater an der Wien in Vienna in 1805, during the French occupation of the city, and the final "
     "revised version in 1814."),
    ("Ludwig van Beethoven",
     "Ludwig van Beethoven (baptised 17 December 1770 - 26 March 1827) was a German composer and pianist. "
     "Born in Bonn, he moved to Vienna in his early twenties to study composition and quickly won a "
     "reputation as a virtuoso pianist. Despite a progressive loss of hearing that left him almost "
     "completely deaf, he went on composing, and his nine symphonies, 32 piano sonatas and late string "
     "quartets link the Classical and Romantic periods."),
    ("Antonio Salieri",
     "Antonio Salieri (18 August 1750 - 7 May 1825) was an Italian composer, conductor and teacher. Born "
     "in Legnago, south of Verona, he spent his adult life in Vienna, where he served as Kapellmeister of "
     "the Habsburg court and wrote operas in Italian, French and German. Among his pupils were Beethoven, "
     "Schubert and Liszt. His supposed rivalry with Mozart was dramatised by Alexander Pushkin and in "
     "Peter Shaffer's play Amadeus."),
    ("Joseph Haydn",
     "Franz Joseph Haydn (31 March 1732 - 31 May 1809) was an Austrian composer of the Classical period. "
     "Born in the village of Rohrau near the Hungarian border, he sang as a choirboy at St. Stephen's "
     "Cathedral in Vienna and spent most of his career as court musician to the wealthy Esterhazy family. "
     "He was instrumental in developing the symphony and the string quartet, and is often called the "
     "Father of the Symphony."),
    ("Bohemian Rhapsody",
     "'Bohemian Rhapsody' is a song by the British rock band Queen, released as the lead single from their "
     "fourth album, A Night at the Opera (1975). Written by Freddie Mercury, the six-minute song has no "
     "chorus and moves through an introduction, a ballad, an operatic passage and a hard rock section "
     "before a reflective coda. It topped the UK Singles Chart for nine weeks and returned to number one "
     "after the singer's death in 1991."),
    ("Freddie Mercury",
     "Freddie Mercury (born Farrokh Bulsara; 5 September 1946 - 24 November 1991) was a British singer and "
     "songwriter who achieved worldwide fame as the lead vocalist of the rock band Queen. Born in Zanzibar "
     "to Parsi-Indian parents, he attended English-style boarding schools in India from the age of eight "
     "and moved with his family to Middlesex, England, in 1964. He was known for his flamboyant stage "
     "persona and a vocal range of four octaves."),
    ("A Night at the Opera (Queen album)",
     "A Night at the Opera is the fourth studio album by the British rock band Queen, released on 21 "
     "November 1975 by EMI Records. Named after a Marx Brothers film, it was at the time said to be the "
     "most expensive album ever recorded, made in several studios with the producer Roy Thomas Baker. It "
     "includes the ballad 'Love of My Life', the hit 'You're My Best Friend' and the band's six-minute "
     "operatic single."),
    ("Bohemian Rhapsody (film)",
     "Bohemian Rhapsody is a 2018 biographical musical drama film about Freddie Mercury, the lead singer "
     "of the British rock band Queen. It follows the band from its formation in 1970 to its performance at "
     "Live Aid in 1985. Bryan Singer was credited as director, although Dexter Fletcher completed the "
     "film after Singer was fired. Rami Malek won the Academy Award for Best Actor for playing the singer."),
    ("Brian May",
     "Brian Harold May (born 19 July 1947) is an English musician, songwriter and astrophysicist, best "
     "known as the lead guitarist of the rock band Queen. Born in Hampton, Middlesex, he built his own "
     "electric guitar, the Red Special, with his father as a teenager. He wrote songs such as 'We Will "
     "Rock You' and 'Fat Bottomed Girls', and in 2007 completed a doctorate in astrophysics at Imperial "
     "College London that he had abandoned in the 1970s."),
    ("Roger Taylor (Queen drummer)",
     "Roger Meddows Taylor (born 26 July 1949) is an English musician and the drummer of the rock band "
     "Queen. Born in King's Lynn, Norfolk, he grew up in Truro, Cornwall, and moved to London to study "
     "dentistry before switching to biology. He is known for his high falsetto harmonies and wrote the "
     "band's hits 'Radio Ga Ga' and 'A Kind of Magic', as well as solo albums and work with his side "
     "project the Cross."),
    ("We Are the Champions",
     "'We Are the Champions' is a song by the British rock band Queen, written by Freddie Mercury and "
     "first released on the band's 1977 album News of the World, together with 'We Will Rock You' on the "
     "other side of the single. A slow power ballad with a rousing chorus, it became an anthem at sporting "
     "events around the world and reached number two in the UK and number four in the United States."),
    ("Somebody to Love (Queen song)",
     "'Somebody to Love' is a song by the British rock band Queen, written by the lead singer and pianist "
     "Freddie Mercury. It appeared on the band's 1976 album A Day at the Races and was influenced by the "
     "gospel music of Aretha Franklin; Mercury, May and Taylor multi-tracked their voices to sound like a "
     "hundred-voice choir. It reached number two on the UK Singles Chart."),
]

COMPANIES = [
    ("Nokia",
     "Nokia Corporation is a Finnish multinational telecommunications, information technology and "
     "consumer electronics company, founded in 1865 as a pulp mill. Headquartered in Espoo, Finland, it "
     "was the world's largest vendor of mobile phones from 1998 to 2012. After selling its phone business "
     "to Microsoft in 2014 it concentrated on network infrastructure, and it bought the French-American "
     "telecommunications equipment maker Alcatel-Lucent in 2016."),
    ("Finland",
     "Finland, officially the Republic of Finland, is a Nordic country in Northern Europe. It shares land "
     "borders with Sweden to the northwest, Norway to the north and Russia to the east, and faces Estonia "
     "across the Gulf of Finland. Helsinki, on the southern coast, is its capital and largest city. Finland "
     "has about 5.6 million people, most of whom speak Finnish, while Swedish is the second official "
     "language; it joined the European Union in 1995 and NATO in 2023."),
    ("Ericsson",
     "Telefonaktiebolaget LM Ericsson, commonly known as Ericsson, is a Swedish multinational networking "
     "and telecommunications company headquartered in Stockholm. Founded in 1876 by Lars Magnus Ericsson "
     "as a telegraph repair shop, it is one of the leading providers of mobile network equipment. From "
     "2001 to 2012 it made mobile phones together with Sony under the name Sony Ericsson, the main rival "
     "of Nokia in that period."),
    ("Nokia, Finland",
     "Nokia is a town and municipality on the Nokianvirta river in the Pirkanmaa region of Finland, about "
     "15 kilometres west of Tampere. It has around 35,000 inhabitants. The town gave its name to the "
     "Nokia company, whose wood-pulp mill on the rapids of the river was one of its first industries, and "
     "it is still the home of the tyre maker Nokian Tyres and of a large paper mill."),
    ("Nokian Tyres",
     "Nokian Tyres plc is a Finnish tyre manufacturer headquartered in the town of Nokia. It grew out of "
     "the Finnish Rubber Works, which became part of the Nokia conglomerate in 1967, and it became an "
     "independent company in 1988. It is known for winter tyres designed for Nordic conditions, which it "
     "tests at its own facility in Lapland, and it also makes tyres for heavy machinery."),
    ("HMD Global",
     "HMD Global Oy is a Finnish mobile phone company headquartered in Espoo, Finland. It was founded in "
     "2016 by former Nokia executives after Microsoft sold the Nokia feature phone business, and for "
     "several years it made smartphones and basic phones under the Nokia brand through a licence "
     "agreement, running Android. In 2024 it began selling phones under its own HMD name."),
    ("Jorma Ollila",
     "Jorma Jaakko Ollila (born 15 August 1950) is a Finnish businessman. He was chief executive of Nokia "
     "from 1992 to 2006 and its chairman until 2012, and under his leadership the company turned from an "
     "ailing conglomerate that made rubber boots, cables and televisions into the world's largest maker "
     "of mobile phones. He was later chairman of the oil company Royal Dutch Shell."),
    ("Sweden",
     "Sweden, officially the Kingdom of Sweden, is a Nordic country on the Scandinavian Peninsula in "
     "Northern Europe. It borders Norway to the west and north and Finland to the east, and is connected "
     "to Denmark by the Oresund Bridge. Its capital and largest city is Stockholm. With about 10.5 million "
     "people it is the most populous Nordic country, and it joined NATO in 2024 after two centuries of "
     "military non-alignment."),
    ("Estonia",
     "Estonia, officially the Republic of Estonia, is a country in Northern Europe on the eastern shore of "
     "the Baltic Sea, bordered by Latvia to the south and Russia to the east. Its capital and largest city "
     "is Tallinn, whose medieval old town is a World Heritage Site. With about 1.3 million people it is one "
     "of the least populous members of the European Union, and it is known for its digital public "
     "services and electronic voting."),
    ("iPhone",
     "The iPhone is a line of smartphones designed and marketed by Apple. It runs iOS, the company's own "
     "mobile operating system. The first-generation iPhone was announced by Steve Jobs on January 9, 2007, "
     "as a combination of a phone, a widescreen iPod and an internet device with a multi-touch screen, "
     "and it changed the mobile phone industry. Most models are assembled in China by contract "
     "manufacturers such as Foxconn."),
    ("Apple Inc.",
     "Apple Inc. is an American multinational technology company founded in 1976 by Steve Jobs, Steve "
     "Wozniak and Ronald Wayne to sell Wozniak's Apple I personal computer. Based in Cupertino, "
     "California, where its ring-shaped Apple Park campus opened in 2017, it is best known for its consumer "
     "electronics, software and online services. In August 2018 it became the first American public "
     "company valued at one trillion dollars."),
    ("Foxconn",
     "Hon Hai Precision Industry Co., Ltd., trading as Foxconn, is a Taiwanese multinational electronics "
     "contract manufacturer headquartered in Tucheng District, New Taipei City. Founded by Terry Gou in "
     "1974 as a maker of plastic parts for television sets, it is the world's largest electronics "
     "manufacturer and assembles devices such as the iPhone for Apple in huge factory campuses in "
     "mainland China, such as the one in Zhengzhou."),
    ("iPad",
     "The iPad is a brand of tablet computers developed and marketed by Apple that run the iPadOS "
     "operating system. The first model was announced by Steve Jobs in January 2010 and released on April "
     "3, 2010. Later lines include the iPad Mini, the iPad Air and the iPad Pro, which supports a stylus "
     "and a keyboard cover, and the iPad became the best-selling tablet computer in the world."),
    ("iPod",
     "The iPod is a discontinued series of portable media players designed and marketed by Apple. The "
     "first version, with a mechanical scroll wheel and a five-gigabyte hard drive, was released on "
     "October 23, 2001, and later models included the tiny iPod Shuffle, the iPod Nano and the "
     "touchscreen iPod Touch. Together with the iTunes Store it transformed the music business, and the "
     "last model was discontinued in May 2022."),
    ("Samsung Electronics",
     "Samsung Electronics Co., Ltd. is a South Korean multinational electronics company headquartered in "
     "the Yeongtong District of Suwon. Part of the Samsung chaebol, it is the world's largest maker of "
     "smartphones by volume and of memory chips, and its Galaxy line of phones, which run Android, is the "
     "main rival of Apple's. It also makes televisions, displays and home appliances."),
    ("Steve Jobs",
     "Steven Paul Jobs (February 24, 1955 - October 5, 2011) was an American businessman, inventor and "
     "investor. Born in San Francisco and adopted as an infant, he co-founded Apple with Steve Wozniak in "
     "1976, working at first from the garage of his parents' house in Los Altos. Forced out of the company "
     "in 1985, he founded NeXT and bought the animation studio Pixar, then returned in 1997 and led the "
     "launch of the iPod, the iPhone and the iPad."),
    ("BlackBerry Limited",
     "BlackBerry Limited is a Canadian software company headquartered in Waterloo, Ontario. Founded in "
     "1984 as Research In Motion by Mike Lazaridis and Douglas Fregin, it designed the BlackBerry "
     "smartphones with physical keyboards that dominated the market for business phones in the 2000s. "
     "After losing ground to touchscreen phones it stopped designing its own devices in 2016 and now sells "
     "cybersecurity software."),
    ("Android (operating system)",
     "Android is a mobile operating system based on a modified version of the Linux kernel, designed "
     "mainly for touchscreen smartphones and tablets. It was developed by Android Inc., which Google bought "
     "in 2005, and was unveiled in 2007 together with the Open Handset Alliance; the first Android phone "
     "went on sale in 2008. Licensed to many manufacturers, it is the most widely used operating system "
     "in the world."),
    ("Ford Motor Company",
     "Ford Motor Company is an American multinational automobile manufacturer headquartered in Dearborn, "
     "Michigan. It was founded by Henry Ford and incorporated on June 16, 1903. The company sells cars and "
     "trucks under the Ford brand and luxury vehicles under the Lincoln brand. It introduced the moving "
     "assembly line for the Model T in 1913, and its F-Series pickup trucks have been the best-selling "
     "vehicles in the United States for decades."),
    ("Henry Ford",
     "Henry Ford (July 30, 1863 - April 7, 1947) was an American industrialist and business magnate. "
     "Raised on a farm in Wayne County, Michigan, he left home at sixteen to work as an apprentice "
     "machinist and built his first experimental vehicle, the Quadricycle, in 1896. He made the automobile "
     "affordable to middle-class Americans with mass production and high wages. He and his wife Clara had "
     "one child, Edsel, who was president of the company from 1919 until his death in 1943."),
    ("Ford Model T",
     "The Ford Model T is an automobile produced by Ford Motor Company from October 1, 1908, to May 26, "
     "1927. Generally regarded as the first affordable car, it opened travel to the common middle-class "
     "American, helped by efficient assembly-line production instead of individual hand crafting. More "
     "than 15 million were built, and it was nicknamed the Tin Lizzie; its founder famously said a buyer "
     "could have it in any colour so long as it was black."),
    ("General Motors",
     "General Motors Company (GM) is an American multinational automotive manufacturing company. It was "
     "founded on September 16, 1908, by William C. Durant in Flint, Michigan, as a holding company for "
     "Buick, and it soon acquired Oldsmobile and Cadillac, and later Chevrolet. For 77 years, from 1931 "
     "to 2007, it was the world's largest automaker by sales. It went through bankruptcy and a government "
     "rescue in 2009."),
    ("Chrysler",
     "FCA US LLC, doing business as Chrysler, is one of the Big Three American automobile manufacturers. "
     "It was founded in 1925 by Walter Chrysler from the remains of the Maxwell Motor Company and bought "
     "Dodge in 1928. Headquartered in Auburn Hills, Michigan, it has been owned by Daimler, by Fiat and "
     "now by the multinational Stellantis, and it sells vehicles under the Chrysler, Dodge, Jeep and Ram "
     "brands."),
    ("Walter Chrysler",
     "Walter Percy Chrysler (April 2, 1875 - August 18, 1940) was an American automotive industry "
     "executive. Born in Wamego, Kansas, he began as a railroad machinist and rose to run a locomotive "
     "works before becoming works manager and then president of Buick. In 1925 he founded the car company "
     "that bears his name, and he financed the Art Deco skyscraper in New York that was briefly the "
     "tallest building in the world."),
    ("Lincoln Motor Company",
     "The Lincoln Motor Company, or simply Lincoln, is the luxury vehicle division of the American "
     "automaker Ford. It was founded in August 1917 by Henry Leland, who had earlier founded Cadillac, and "
     "his son Wilfred, to build aircraft engines for the First World War. After it fell into receivership "
     "it was bought by Ford Motor Company in 1922, and its cars have carried several American presidents."),
    ("Dodge",
     "Dodge is an American brand of automobiles and a division of Stellantis. It was founded as a machine "
     "shop in the early 1900s by the brothers Horace and John Dodge, who supplied engines and parts to "
     "Ford Motor Company before building complete cars of their own from 1914. After both brothers died "
     "in 1920, the company was sold, and it has been owned by Chrysler since 1928."),
    ("Ransom E. Olds",
     "Ransom Eli Olds (June 3, 1864 - August 26, 1950) was a pioneer of the American automotive industry. "
     "Born in Geneva, Ohio, he founded the Olds Motor Vehicle Company in Lansing, Michigan, in 1897, whose "
     "Curved Dash Oldsmobile of 1901 was the first car built in large numbers on a stationary assembly "
     "line. He later founded the REO Motor Car Company, named after his initials."),
]

UNIVERSITIES = [
    ("Mikhail Gorbachev",
     "Mikhail Sergeyevich Gorbachev (2 March 1931 - 30 August 2022) was a Soviet politician who was the "
     "last leader of the Soviet Union, from 1985 until its dissolution in 1991. Born in Privolnoye to a "
     "peasant family, he studied law at Moscow State University, where he met his wife Raisa, and rose "
     "through the Communist Party in Stavropol. His policies of glasnost and perestroika, and the end of "
     "the Cold War, won him the Nobel Peace Prize in 1990."),
    ("Lomonosov Moscow State University",
     "Lomonosov Moscow State University (MSU) is a public research university in Moscow, Russia. It was "
     "established on 25 January 1755 on the initiative of the scholar Mikhail Lomonosov and the courtier "
     "Ivan Shuvalov, and it was renamed in Lomonosov's honour in 1940. Its main building on the Sparrow "
     "Hills, one of the Seven Sisters skyscrapers commissioned by Stalin, was the tallest building in "
     "Europe when it was completed in 1953."),
    ("Saint Petersburg State University",
     "Saint Petersburg State University (SPbU) is a public research university in Saint Petersburg, "
     "Russia. It traces its origins to the university of the Academy of Sciences set up by a decree of "
     "Peter the Great in 1724, which would make it the oldest university in the country. During the "
     "Soviet era it was named Leningrad State University, and its alumni include several Nobel laureates and "
     "the Russian leaders Vladimir Putin and Dmitry Medvedev."),
    ("Vladimir Putin",
     "Vladimir Vladimirovich Putin (born 7 October 1952) is a Russian politician and former intelligence "
     "officer who has been president of Russia since 2012, having held the office from 2000 to 2008 and "
     "served as prime minister in between. Born in Leningrad, he studied law at Leningrad State "
     "University, graduating in 1975, and then spent sixteen years as a KGB foreign intelligence officer, "
     "partly in Dresden, East Germany."),
    ("Raisa Gorbacheva",
     "Raisa Maximovna Gorbacheva (5 January 1932 - 20 September 1999) was a Soviet sociologist and the "
     "wife of Mikhail Gorbachev. Born in Rubtsovsk in the Altai region of Siberia, she studied philosophy "
     "at Moscow State University, where she met her future husband at a dance, and later lectured on "
     "Marxist-Leninist philosophy. As first lady she was the first wife of a Soviet leader to take a "
     "public role, and she died of leukaemia in Germany."),
    ("Boris Yeltsin",
     "Boris Nikolayevich Yeltsin (1 February 1931 - 23 April 2007) was a Soviet and Russian politician who "
     "served as the first president of Russia from 1991 to 1999. Born in the village of Butka in the Urals, "
     "he studied construction at the Ural Polytechnic Institute in Sverdlovsk and worked in the building "
     "industry before becoming the Communist Party boss of Sverdlovsk Oblast. He resigned on the last day "
     "of 1999 in favour of his prime minister."),
    ("Higher School of Economics",
     "HSE University, officially the National Research University Higher School of Economics, is a public "
     "research university in Moscow, Russia. It was founded in 1992 by a group of liberal economists to "
     "train specialists for a market economy, and has since grown into a large university with campuses "
     "in Saint Petersburg, Nizhny Novgorod and Perm, teaching economics, social sciences, law, computer "
     "science and the humanities."),
    ("Moscow Institute of Physics and Technology",
     "The Moscow Institute of Physics and Technology (MIPT), informally known as Phystech, is a public "
     "university in Dolgoprudny, a town just north of Moscow, Russia. It began in 1946 as a physics and "
     "technology faculty of a larger university and became independent in 1951. It trains researchers in "
     "theoretical and applied physics, mathematics and computer science, and the Nobel laureates Andre "
     "Geim and Konstantin Novoselov studied there."),
    ("Mikhail Lomonosov",
     "Mikhail Vasilyevich Lomonosov (19 November 1711 - 15 April 1765) was a Russian polymath, scientist "
     "and writer who made contributions to chemistry, physics, astronomy, geography, history and poetry. "
     "The son of a fisherman from a village near Kholmogory on the White Sea, he walked to Moscow as a "
     "young man to study. He discovered the atmosphere of Venus, reformed the Russian literary language "
     "and helped set up the university in Moscow that now bears his name."),
    ("Moscow Conservatory",
     "The Moscow Conservatory, officially the Tchaikovsky Moscow State Conservatory, is a music school in "
     "Moscow, Russia. It was co-founded in 1866 by the pianist Nikolai Rubinstein and Prince Nikolai "
     "Troubetzkoy, and Pyotr Ilyich Tchaikovsky taught harmony there for twelve years; it has carried his "
     "name since 1940. Its Great Hall hosts the International Tchaikovsky Competition for young "
     "musicians."),
    ("Harvard University",
     "Harvard University is a private Ivy League research university in Cambridge, Massachusetts. Founded "
     "in 1636 as Harvard College and named for its first benefactor, the Puritan clergyman John Harvard, "
     "it is the oldest institution of higher learning in the United States. Its endowment is the largest "
     "of any academic institution, and its library is the largest academic library in the world."),
    ("Yale University",
     "Yale University is a private Ivy League research university in New Haven, Connecticut. Founded in "
     "1701 as the Collegiate School by Congregationalist clergy, it is the third-oldest institution of "
     "higher education in the United States. It was renamed in 1718 in honour of Elihu Yale, a merchant "
     "of the East India Company who had donated books and goods, and it organises undergraduate life "
     "around fourteen residential colleges."),
    ("Princeton University",
     "Princeton University is a private Ivy League research university in Princeton, New Jersey. Founded "
     "in 1746 in Elizabeth as the College of New Jersey, it moved to Newark and then to Princeton in 1756, "
     "and was renamed in 1896. It is the fourth-oldest institution of higher education in the United "
     "States and is known for its undergraduate teaching and for the nearby Institute for Advanced Study, "
     "where Albert Einstein worked."),
    ("College of William & Mary",
     "The College of William & Mary is a public research university in Williamsburg, Virginia. Founded in "
     "1693 by letters patent issued by King William III and Queen Mary II, it is the second-oldest "
     "institution of higher education in the United States. Thomas Jefferson, James Monroe and John Tyler "
     "studied there, and it founded Phi Beta Kappa, the oldest academic honour society in the country, in "
     "1776."),
    ("Columbia University",
     "Columbia University is a private Ivy League research university in New York City. Established in "
     "1754 as King's College by a royal charter of George II of Great Britain, it is the oldest "
     "institution of higher education in New York and the fifth-oldest in the United States. It was "
     "renamed Columbia College in 1784 after the American Revolution, and it administers the Pulitzer "
     "Prizes."),
    ("Brown University",
     "Brown University is a private Ivy League research university in Providence, Rhode Island. Founded in "
     "1764 as the College in the English Colony of Rhode Island and Providence Plantations, it is the "
     "seventh-oldest institution of higher education in the United States and was the first college in "
     "the colonies to accept students of every religious affiliation. It was renamed in 1804 after the "
     "merchant Nicholas Brown Jr."),
    ("Massachusetts Institute of Technology",
     "The Massachusetts Institute of Technology (MIT) is a private research university in Cambridge, "
     "Massachusetts. Founded in 1861 by William Barton Rogers in response to the industrialisation of the "
     "United States, it adopted the European polytechnic model and stressed laboratory instruction. It "
     "moved from Boston across the Charles River in 1916 and is known for its work in engineering, "
     "physics, computer science and economics."),
    ("John Harvard (clergyman)",
     "John Harvard (November 26, 1607 - September 14, 1638) was an English minister in colonial America. "
     "Born in Southwark, London, he studied at Emmanuel College, Cambridge, and emigrated to the "
     "Massachusetts Bay Colony in 1637. His deathbed bequest of his library of about four hundred books "
     "and half of his estate to the new college at Newtowne led the colony to name the college after him."),
    ("Dartmouth College",
     "Dartmouth College is a private Ivy League research university in Hanover, New Hampshire. Founded in "
     "1769 by the Congregationalist minister Eleazar Wheelock, partly to educate Native Americans, it is "
     "the ninth-oldest institution of higher education in the United States. The Supreme Court case "
     "Dartmouth College v. Woodward of 1819, which protected its charter from the state, was a landmark "
     "for private institutions."),
]

SCIENCE = [
    ("Penicillin",
     "Penicillins are a group of beta-lactam antibiotics originally obtained from Penicillium moulds. In "
     "1928 the Scottish physician Alexander Fleming noticed that a mould contaminating one of his "
     "bacterial cultures at St Mary's Hospital in London had killed the bacteria around it. Purified and "
     "produced in quantity in the 1940s by a team at Oxford that included Howard Florey and Ernst Chain, "
     "it became the first widely used antibiotic and saved many lives in the Second World War."),
    ("Alexander Fleming",
     "Sir Alexander Fleming (6 August 1881 - 11 March 1955) was a Scottish physician and microbiologist. "
     "Born on Lochfield farm near Darvel in Ayrshire, he moved to London as a teenager and studied "
     "medicine at St Mary's Hospital Medical School, where he spent his whole career. He also discovered "
     "the enzyme lysozyme in the early 1920s, and he shared the Nobel Prize in Physiology or Medicine "
     "in 1945 with Florey and Chain."),
    ("Howard Florey",
     "Howard Walter Florey, Baron Florey (24 September 1898 - 21 February 1968) was an Australian "
     "pharmacologist and pathologist. Born in Adelaide, he studied medicine there and then at Oxford as a "
     "Rhodes Scholar, and in 1939 he and Ernst Chain began the work at the Sir William Dunn School of "
     "Pathology that turned penicillin into a practical drug. He shared the 1945 Nobel Prize and later "
     "served as President of the Royal Society."),
    ("Ernst Chain",
     "Sir Ernst Boris Chain (19 June 1906 - 12 August 1979) was a German-born British biochemist. Born in "
     "Berlin to a family of Jewish industrialists, he left Germany in 1933 and joined Howard Florey at "
     "Oxford, where he isolated and purified penicillin and worked out how it acts. He shared the 1945 "
     "Nobel Prize in Physiology or Medicine, and later built a fermentation plant in Rome and taught at "
     "Imperial College London."),
    ("Streptomycin",
     "Streptomycin is an antibiotic used to treat tuberculosis and several other bacterial infections. It "
     "was first isolated in 1943 by Albert Schatz, a graduate student in the laboratory of Selman Waksman "
     "at Rutgers University, from a soil bacterium of the genus Streptomyces. It was the first antibiotic "
     "effective against tuberculosis, and it is on the World Health Organization's list of essential "
     "medicines."),
    ("Selman Waksman",
     "Selman Abraham Waksman (July 22, 1888 - August 16, 1973) was a Ukrainian-born American biochemist and "
     "microbiologist. Born in Nova Pryluka near Vinnytsia in the Russian Empire, he emigrated to the United "
     "States in 1910 and studied at Rutgers College. His research on soil organisms led to the discovery "
     "of streptomycin and other antibiotics, a word he popularised, and he received the Nobel Prize in "
     "Physiology or Medicine in 1952."),
    ("Louis Pasteur",
     "Louis Pasteur (27 December 1822 - 28 September 1895) was a French chemist and microbiologist. Born "
     "in Dole in the Jura, he is remembered for his discoveries on vaccination, microbial fermentation "
     "and pasteurisation, the heating of milk and wine to kill bacteria. He disproved the spontaneous "
     "generation of life, developed vaccines against anthrax and rabies, and founded the Pasteur "
     "Institute in Paris in 1887."),
    ("Dorothy Hodgkin",
     "Dorothy Mary Crowfoot Hodgkin (12 May 1910 - 29 July 1994) was a British chemist who developed "
     "protein crystallography. Born in Cairo, where her father worked for the education service, she "
     "studied chemistry at Somerville College, Oxford. Using X-ray crystallography she confirmed the "
     "structure of penicillin in 1945 and later solved those of vitamin B12 and insulin, and she won the "
     "Nobel Prize in Chemistry in 1964."),
    ("Paul Ehrlich",
     "Paul Ehrlich (14 March 1854 - 20 August 1915) was a German physician and scientist who worked in "
     "haematology, immunology and chemotherapy. Born in Strehlen in Prussian Silesia, he developed stains "
     "for telling blood cells apart, and in 1909 his laboratory found Salvarsan, the first effective "
     "treatment for syphilis and the first modern synthetic antimicrobial drug. He shared the Nobel Prize "
     "in Physiology or Medicine in 1908."),
    ("World Wide Web",
     "The World Wide Web, commonly known as the Web, is an information system that lets documents and "
     "other resources be linked by hyperlinks and reached over the Internet. The English computer "
     "scientist Tim Berners-Lee proposed it in 1989 while working at CERN near Geneva, and in 1990 he "
     "wrote the first web browser and web server there. It was opened to the public in 1991 and became "
     "the main way billions of people use the Internet."),
    ("Tim Berners-Lee",
     "Sir Timothy John Berners-Lee (born 8 June 1955) is an English computer scientist. Born in London to "
     "two mathematicians who had worked on the Ferranti Mark 1 computer, he studied physics at The "
     "Queen's College, Oxford, graduating in 1976, and built his first computer from an old television "
     "set. He directs the World Wide Web Consortium, which oversees the Web's standards, and he received "
     "the Turing Award in 2016."),
    ("CERN",
     "The European Organization for Nuclear Research, known as CERN, is an intergovernmental organisation "
     "that operates the largest particle physics laboratory in the world. Established in 1954, it is "
     "based in Meyrin, a north-western suburb of Geneva on the border between France and Switzerland, "
     "and it has more than 20 member states. Its Large Hadron Collider found the Higgs boson in 2012, "
     "and the Web was invented there."),
    ("Robert Cailliau",
     "Robert Cailliau (born 26 January 1947) is a Belgian informatics engineer and computer scientist who, "
     "together with Tim Berners-Lee, developed the World Wide Web at CERN. Born in Tongeren, he studied "
     "electrical and mechanical engineering at Ghent University and later computer science at the "
     "University of Michigan. He co-wrote the 1990 proposal for the project and organised the first "
     "international conference on the Web in 1994."),
    ("Vint Cerf",
     "Vinton Gray Cerf (born June 23, 1943) is an American Internet pioneer recognised as one of the "
     "fathers of the Internet. Born in New Haven, Connecticut, he studied mathematics at Stanford "
     "University and computer science at UCLA, and with Bob Kahn he designed the TCP/IP protocols that the "
     "Internet is built on. He shared the 2004 Turing Award with Kahn and later became chief Internet "
     "evangelist at Google."),
    ("Marc Andreessen",
     "Marc Lowell Andreessen (born July 9, 1971) is an American entrepreneur and investor. While studying "
     "computer science at the University of Illinois Urbana-Champaign, he co-wrote Mosaic, the first "
     "widely used graphical web browser, and in 1994 he co-founded Netscape, whose browser dominated the "
     "early commercial Web. In 2009 he co-founded the venture capital firm Andreessen Horowitz."),
    ("Mosaic (web browser)",
     "NCSA Mosaic is a discontinued early web browser developed at the National Center for Supercomputing "
     "Applications at the University of Illinois Urbana-Champaign. Work began in late 1992 and it was "
     "released in 1993. It displayed images inline with text instead of in a separate window and ran on "
     "ordinary personal computers, and it is credited with making the World Wide Web popular with the "
     "general public."),
    ("Internet",
     "The Internet is the global system of interconnected computer networks that uses the Internet "
     "protocol suite (TCP/IP) to communicate between networks and devices. It grew out of the ARPANET, a "
     "research network funded by the United States Department of Defense in the late 1960s, and was "
     "opened to commercial traffic in the early 1990s. It carries the Web, electronic mail, telephony and "
     "file sharing."),
    ("HTML",
     "HyperText Markup Language (HTML) is the standard markup language for documents designed to be "
     "displayed in a web browser. Its first publicly available description was a document called 'HTML "
     "Tags', written by the inventor of the Web in late 1991. Elements such as headings, paragraphs, links "
     "and images are marked with tags in angle brackets, and the standard is now maintained by the WHATWG "
     "as a living standard."),
    ("Alan Turing",
     "Alan Mathison Turing (23 June 1912 - 7 June 1954) was an English mathematician, computer scientist, "
     "logician and cryptanalyst. Born in Maida Vale, London, he studied mathematics at King's College, "
     "Cambridge, where he described the abstract computing device now called the Turing machine. During "
     "the Second World War he led work at Bletchley Park on breaking German ciphers, including the "
     "Enigma."),
    ("Apollo 11",
     "Apollo 11 was the American spaceflight that first landed humans on the Moon. Commander Neil "
     "Armstrong and lunar module pilot Buzz Aldrin landed the lunar module Eagle in the Sea of "
     "Tranquility on July 20, 1969, while Michael Collins flew the command module Columbia in lunar "
     "orbit. Armstrong became the first person to step onto the lunar surface, and the crew returned to "
     "Earth on July 24 with rock and soil samples."),
    ("Neil Armstrong",
     "Neil Alden Armstrong (August 5, 1930 - August 25, 2012) was an American astronaut and aeronautical "
     "engineer. Born near Wapakoneta, Ohio, he studied aeronautical engineering at Purdue University on a "
     "Navy scholarship, flew combat missions in the Korean War and became a research test pilot of the "
     "X-15 rocket plane before joining NASA in 1962. He later earned a master's degree at the University "
     "of Southern California and rarely gave interviews about the landing."),
    ("Buzz Aldrin",
     "Buzz Aldrin (born Edwin Eugene Aldrin Jr.; January 20, 1930) is an American former astronaut, "
     "engineer and fighter pilot. Born in Glen Ridge, New Jersey, he graduated third in his class from "
     "the United States Military Academy at West Point in 1951, flew combat missions in the Korean War, "
     "and earned a doctorate in astronautics from MIT, where his thesis dealt with orbital rendezvous. He "
     "made three spacewalks on Gemini 12."),
    ("Michael Collins (astronaut)",
     "Michael Collins (October 31, 1930 - April 28, 2021) was an American astronaut who flew the command "
     "module Columbia around the Moon while his two crewmates made the first landing. Born in Rome, Italy, "
     "where his father was serving as a United States Army attache, he graduated from West Point in 1952 "
     "and became a test pilot. He also flew on Gemini 10 and later directed the National Air and Space "
     "Museum."),
    ("Apollo 12",
     "Apollo 12 was the sixth crewed flight of the United States Apollo program and the second to land on "
     "the Moon. Launched on November 14, 1969, it was struck twice by lightning during ascent. Commander "
     "Pete Conrad and lunar module pilot Alan Bean landed in the Ocean of Storms close to the Surveyor 3 "
     "probe, while Richard F. Gordon Jr. stayed in lunar orbit."),
    ("Pete Conrad",
     "Charles 'Pete' Conrad Jr. (June 2, 1930 - July 8, 1999) was an American astronaut, engineer and "
     "naval aviator who commanded Apollo 12 and became the third person to walk on the Moon. Born in "
     "Philadelphia, he received a bachelor's degree in aeronautical engineering from Princeton University "
     "in 1953 and became a test pilot. He also flew on Gemini 5 and Gemini 11 and commanded the first "
     "crew of the Skylab space station."),
    ("Apollo 13",
     "Apollo 13 was the seventh crewed mission of the Apollo space program and the third meant to land on "
     "the Moon. Launched on April 11, 1970, it had to abort the landing after an oxygen tank in the service "
     "module failed two days into the mission. Commander Jim Lovell, Jack Swigert and Fred Haise used the "
     "lunar module as a lifeboat and returned safely to Earth on April 17."),
    ("Yuri Gagarin",
     "Yuri Alekseyevich Gagarin (9 March 1934 - 27 March 1968) was a Soviet pilot and cosmonaut who became "
     "the first human to journey into outer space. Aboard the Vostok 1 capsule he completed one orbit of "
     "the Earth on 12 April 1961. Born in the village of Klushino west of Moscow, he trained as a foundry "
     "worker and a military pilot, and he died when the MiG-15 jet he was flying crashed on a training "
     "flight."),
    ("John Glenn",
     "John Glenn (July 18, 1921 - December 8, 2016), born John Herschel Glenn Jr., was an American Marine "
     "Corps aviator, astronaut and politician. In 1962, aboard Friendship 7, he became the first American "
     "to orbit the Earth. Born in Cambridge, Ohio, he studied engineering at Muskingum College and flew "
     "combat missions in the Second World War and Korea. He served as a senator from Ohio from 1974 to "
     "1999 and returned to space on the Space Shuttle Discovery at the age of 77."),
]

BUILDINGS = [
    ("Sydney Opera House",
     "The Sydney Opera House is a multi-venue performing arts centre on Bennelong Point in Sydney, "
     "Australia. Designed by the Danish architect Jorn Utzon and finished by an Australian team led by "
     "Peter Hall after Utzon resigned in 1966, it was formally opened by Queen Elizabeth II on 20 October "
     "1973. Its roof of precast concrete shells makes it one of the most recognisable buildings of the "
     "twentieth century, and it became a UNESCO World Heritage Site in 2007."),
    ("Jorn Utzon",
     "Jorn Oberg Utzon (9 April 1918 - 29 November 2008) was a Danish architect. Born in Copenhagen, the "
     "son of a naval engineer, he grew up in Aalborg and studied at the Royal Danish Academy of Fine Arts, "
     "and was influenced by Alvar Aalto and by travels in Mexico and Morocco. His other works include "
     "Bagsvaerd Church, housing at Fredensborg and the National Assembly building in Kuwait, and he "
     "received the Pritzker Prize in 2003."),
    ("Sydney Harbour Bridge",
     "The Sydney Harbour Bridge is a steel through arch bridge across Sydney Harbour in Australia that "
     "carries rail, vehicle, bicycle and pedestrian traffic between the central business district and the "
     "North Shore. Nicknamed the Coathanger for its shape, it was designed and built by the British firm "
     "Dorman Long under the oversight of the engineer John Bradfield, and it opened in March 1932."),
    ("Renzo Piano",
     "Renzo Piano (born 14 September 1937) is an Italian architect. Born in Genoa into a family of "
     "builders, he studied at the Polytechnic University of Milan and rose to fame with the Centre "
     "Pompidou in Paris, designed with Richard Rogers and opened in 1977. His later buildings include the "
     "Kansai International Airport terminal, The Shard in London and the Whitney Museum in New York, and "
     "he received the Pritzker Prize in 1998."),
    ("Guggenheim Museum Bilbao",
     "The Guggenheim Museum Bilbao is a museum of modern and contemporary art designed by the "
     "Canadian-American architect Frank Gehry and located in Bilbao, in the Basque Country of Spain. "
     "Opened in October 1997, it is built of titanium, glass and limestone in curving forms beside the "
     "Nervion river, and its success in reviving a declining industrial city became known as the Bilbao "
     "effect."),
    ("Elbphilharmonie",
     "The Elbphilharmonie is a concert hall in the HafenCity quarter of Hamburg, Germany, on the Grasbrook "
     "peninsula of the Elbe. Designed by the Swiss architects Herzog & de Meuron, it is built on top of an "
     "old brick warehouse, with a glass structure shaped like a wave above it. After years of delay and "
     "cost overruns it opened in January 2017, and it is one of the largest and most acoustically advanced "
     "concert halls in the world."),
    ("Oslo Opera House",
     "The Oslo Opera House is the home of the Norwegian National Opera and Ballet and the national opera "
     "theatre of Norway, in the Bjorvika neighbourhood of central Oslo at the head of the Oslofjord. "
     "Designed by the Norwegian architecture firm Snohetta, it opened in April 2008. Its sloping roof of "
     "white Carrara marble rises from the water and can be walked on by visitors."),
    ("Harry Seidler",
     "Harry Seidler (25 June 1923 - 9 March 2006) was an Austrian-born Australian architect, considered a "
     "leading exponent of modernism in Australia. Born in Vienna, he fled to England in 1938, was interned "
     "in Canada, and studied at the University of Manitoba and under Walter Gropius at the Harvard "
     "Graduate School of Design. He moved to Sydney in 1948, and his buildings there include the Rose "
     "Seidler House and Australia Square."),
    ("Opera Australia",
     "Opera Australia is the principal opera company in Australia. Based in Sydney, it performs in the "
     "Joan Sutherland Theatre of the Sydney Opera House for about eight months of the year and at the "
     "State Theatre in Melbourne for much of the rest. It was founded in 1956 as the Elizabethan Theatre "
     "Trust Opera Company, and it also stages a popular outdoor opera on Sydney Harbour each year."),
    ("Eiffel Tower",
     "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. It is named "
     "after the engineer Gustave Eiffel, whose company designed and built the tower as the entrance to the "
     "1889 World's Fair. Although criticised at first by leading artists and intellectuals, it has become "
     "a global cultural icon of France. At about 300 metres it was the tallest man-made structure in the "
     "world for 41 years."),
    ("Gustave Eiffel",
     "Alexandre Gustave Eiffel (15 December 1832 - 27 December 1923) was a French civil engineer. Born in "
     "Dijon and trained at the Ecole Centrale des Arts et Manufactures in Paris, he made his name with "
     "railway bridges such as the Maria Pia Bridge in Porto and the Garabit viaduct. He also designed the "
     "internal iron frame of the Statue of Liberty, and in later life he turned to meteorology and "
     "aerodynamics, building a wind tunnel in Auteuil."),
    ("Maurice Koechlin",
     "Maurice Koechlin (8 April 1856 - 14 January 1946) was a French structural engineer. Born in Buhl in "
     "Alsace, he studied at the Federal Polytechnic School in Zurich before joining the company of Gustave "
     "Eiffel in 1879. In 1884, with his colleague Emile Nouguier, he drew the first sketch of a very tall "
     "iron pylon that became the tower of the 1889 exhibition, and he also calculated the structure of "
     "the Statue of Liberty's frame."),
    ("Stephen Sauvestre",
     "Stephen Sauvestre (26 December 1847 - 18 June 1919) was a French architect. He is best known for his "
     "part in the design of the Eiffel Tower: working for the engineer's company, he refined the first "
     "sketch of the pylon by adding the great decorative arches at its base, a glass pavilion on the first "
     "level and a rounded top. He also designed villas and schools in and around Paris."),
    ("Statue of Liberty",
     "The Statue of Liberty is a colossal neoclassical sculpture on Liberty Island in New York Harbor, in "
     "the United States. A gift from the people of France, the copper statue of a robed woman holding a "
     "torch was designed by the French sculptor Frederic Auguste Bartholdi, and its metal framework was "
     "built by Gustave Eiffel. It was dedicated on October 28, 1886, and became a symbol of freedom for "
     "immigrants arriving by sea."),
    ("Frederic Auguste Bartholdi",
     "Frederic Auguste Bartholdi (2 August 1834 - 4 October 1904) was a French sculptor. Born in Colmar in "
     "Alsace, he studied architecture and painting in Paris before turning to sculpture. He is best known "
     "for designing Liberty Enlightening the World, commonly known as the Statue of Liberty, and also "
     "made the Lion of Belfort, a huge red sandstone lion carved into the cliff below the citadel of "
     "Belfort."),
    ("Exposition Universelle (1889)",
     "The Exposition Universelle of 1889 was a world's fair held in Paris, France, from 6 May to 31 "
     "October 1889. It marked the hundredth anniversary of the storming of the Bastille, and its main "
     "symbol was the iron tower built by Eiffel's company as its entrance arch. More than 30 million "
     "people visited, and its attractions included the huge Gallery of Machines and a 'negro village' "
     "that is now remembered as a human zoo."),
    ("Garabit viaduct",
     "The Garabit viaduct is a railway arch bridge spanning the Truyere river near Ruynes-en-Margeride in "
     "the Cantal department of France. It was built between 1882 and 1884 by Gustave Eiffel's company, "
     "with Leon Boyer as the engineer in charge, and its wrought-iron arch of 165 metres was for a time "
     "the longest in the world. It still carries trains across the gorge."),
    ("Tour Montparnasse",
     "The Tour Montparnasse is a 210-metre office skyscraper in the Montparnasse area of Paris, France. "
     "Completed in 1973, it was the tallest building in France until 2011, and its dark, monolithic "
     "shape was so widely disliked that two years after it opened the city banned new buildings over "
     "seven storeys in the centre. Its 56th-floor terrace offers one of the best views of the city."),
    ("Tokyo Tower",
     "Tokyo Tower is a communications and observation tower in the Shiba-koen district of Minato, Tokyo, "
     "Japan. Completed in 1958 and designed by the architect Tachu Naito, it is 332.9 metres tall, was "
     "inspired by the Eiffel Tower and is painted white and international orange to comply with air "
     "safety rules. It was the tallest structure in Japan until the Tokyo Skytree overtook it in 2010."),
    ("Sagrada Familia",
     "The Basilica de la Sagrada Familia is a large unfinished Roman Catholic church in the Eixample "
     "district of Barcelona, Catalonia, Spain. Designed by the Catalan architect Antoni Gaudi, who took "
     "over the project in 1883 and worked on it until his death in 1926, it combines Gothic and curvilinear "
     "Art Nouveau forms. Construction relied on private donations and was interrupted by the Spanish "
     "Civil War; Pope Benedict XVI consecrated it as a minor basilica in 2010."),
    ("Antoni Gaudi",
     "Antoni Gaudi i Cornet (25 June 1852 - 10 June 1926) was a Catalan architect known as the greatest "
     "exponent of Catalan Modernisme. Born in Reus, in the province of Tarragona, the son of a "
     "coppersmith, he studied at the Barcelona School of Architecture. His works, among them Park Guell, "
     "the Palau Guell and Casa Mila, draw on nature, religion and his love of Catalonia, and he died after "
     "being struck by a tram."),
    ("Park Guell",
     "Park Guell is a public park of gardens and architectural elements on Carmel Hill in Barcelona, "
     "Catalonia. Designed by Antoni Gaudi for the entrepreneur Eusebi Guell and built from 1900 to 1914, "
     "it was meant as a housing estate for wealthy families but only two houses were built. It became a "
     "municipal garden in 1926, and its mosaic-covered serpentine bench and dragon fountain draw millions "
     "of visitors."),
    ("Casa Batllo",
     "Casa Batllo is a building in the centre of Barcelona, on the Passeig de Gracia, remodelled by Antoni "
     "Gaudi between 1904 and 1906 for the textile industrialist Josep Batllo. Its facade of coloured "
     "mosaic, its balconies shaped like masks and its roof resembling the back of a dragon earned it the "
     "local name Casa dels ossos, the House of Bones. It is now a museum and a World Heritage Site."),
    ("Casa Mila",
     "Casa Mila, popularly known as La Pedrera, the stone quarry, is a modernist building in Barcelona, "
     "Catalonia, and the last private residence designed by Antoni Gaudi. It was built between 1906 and "
     "1912 for the businessman Pere Mila and his wife Roser Segimon. Its undulating stone facade, wrought "
     "iron balconies and rooftop of sculpted chimneys made it controversial at the time, and it is now a "
     "World Heritage Site."),
    ("Lluis Domenech i Montaner",
     "Lluis Domenech i Montaner (21 December 1850 - 27 December 1923) was a Spanish architect and "
     "politician. Born in Barcelona, he was a leading figure of Catalan Modernisme alongside Antoni Gaudi, "
     "and he taught for many years at the Barcelona School of Architecture. His best-known buildings are "
     "the Palau de la Musica Catalana and the Hospital de Sant Pau, both World Heritage Sites, and he "
     "sat in the Spanish parliament."),
    ("Palau de la Musica Catalana",
     "The Palau de la Musica Catalana is a concert hall in Barcelona, Catalonia, designed in the Catalan "
     "modernista style by the architect Lluis Domenech i Montaner. It was built between 1905 and 1908 for "
     "the Orfeo Catala, a choral society, and is famous for its stained-glass skylight, its mosaic "
     "pillars and its sculptures of muses. It is the only concert hall in Europe lit entirely by natural "
     "light during the day."),
    ("Barcelona Cathedral",
     "The Cathedral of the Holy Cross and Saint Eulalia, also known as Barcelona Cathedral, is the Gothic "
     "seat of the Archbishop of Barcelona, Catalonia, Spain. It was built from the thirteenth to the "
     "fifteenth centuries on the site of an older church, and its neo-Gothic facade was added in the "
     "nineteenth century. Its cloister keeps thirteen white geese, one for each year of the age of Saint "
     "Eulalia at her martyrdom."),
    ("Josep Puig i Cadafalch",
     "Josep Puig i Cadafalch (17 October 1867 - 23 December 1956) was a Catalan modernista architect, art "
     "historian and politician. Born in Mataro, he designed the Casa Amatller on the Passeig de Gracia in "
     "Barcelona, the Casa de les Punxes and the Casaramona factory, and he studied Romanesque art. He was "
     "president of the Commonwealth of Catalonia from 1917 to 1923 and went into exile during the Spanish "
     "Civil War."),
    ("Taj Mahal",
     "The Taj Mahal is an ivory-white marble mausoleum on the right bank of the Yamuna river in Agra, "
     "India. It was commissioned in 1631 by the Mughal emperor Shah Jahan to house the tomb of his "
     "favourite wife, Mumtaz Mahal, and later his own. The tomb is the centrepiece of a complex of "
     "gardens, a mosque and a guest house, completed around 1653 by some 20,000 artisans, and it became "
     "a UNESCO World Heritage Site in 1983."),
    ("Shah Jahan",
     "Shah Jahan I (5 January 1592 - 22 January 1666), born Prince Khurram, was the fifth Mughal emperor, "
     "reigning from 1628 to 1658. The son of Jahangir and his Rajput wife Jagat Gosaini, he led military "
     "campaigns in the Deccan as a prince, and his reign is considered the golden age of Mughal "
     "architecture. He built a new capital at Delhi, and after falling ill he was deposed by his son and "
     "confined in a fort until his death."),
    ("Mumtaz Mahal",
     "Mumtaz Mahal (born Arjumand Banu Begum; 1593 - 17 June 1631) was the empress consort of the Mughal "
     "emperor Shah Jahan from 1628 until her death. A Persian noblewoman, she married the prince in 1612, "
     "travelled with him on his campaigns and bore him fourteen children. She died in childbirth at "
     "Burhanpur in the Deccan, and the emperor built the Taj Mahal in Agra as her tomb."),
    ("Red Fort",
     "The Red Fort, or Lal Qila, is a historic fort in Old Delhi, India, that served as the main residence "
     "of the Mughal emperors. It was commissioned by Shah Jahan in 1638, when he decided to move his "
     "capital from Agra to Delhi, and is built of red sandstone with marble palaces inside. Since 1947 the "
     "prime minister of India has raised the national flag over its main gate every Independence Day."),
    ("Humayun's Tomb",
     "Humayun's Tomb is the tomb of the Mughal emperor Humayun in Delhi, India. It was commissioned by his "
     "first wife, Empress Bega Begum, in 1558, and designed by the Persian architect Mirak Mirza Ghiyas "
     "and his son. It was the first garden-tomb on the Indian subcontinent, and its red sandstone and "
     "white marble dome set a model that the mausoleum at Agra later followed."),
    ("Akbar",
     "Akbar (1542 - 1605), popularly known as Akbar the Great, was the third Mughal emperor, who reigned "
     "from 1556 to 1605. He succeeded his father Humayun at thirteen, under the regent Bairam Khan, and "
     "expanded the empire across most of the Indian subcontinent. He is remembered for his religious "
     "tolerance, his patronage of the arts and his new capital at Fatehpur Sikri near Agra."),
    ("Aurangzeb",
     "Aurangzeb (1618 - 1707) was the sixth Mughal emperor, ruling from 1658 until his death. He seized "
     "the throne from his father during a war of succession with his brothers, among them the heir Dara "
     "Shikoh, and kept the old emperor prisoner in Agra Fort. Under his rule the empire reached its "
     "greatest extent, but his long wars in the Deccan and his religious policies weakened it."),
    ("Agra Fort",
     "Agra Fort is a historic fort in the city of Agra, India, on the Yamuna river. Rebuilt by the emperor "
     "Akbar in red sandstone from 1565, it was the main residence of the Mughal emperors until the capital "
     "moved to Delhi in 1638. Shah Jahan added white marble palaces inside, and he spent his last years "
     "imprisoned there, in a tower from which he could see the tomb of his wife."),
    ("Bibi Ka Maqbara",
     "Bibi Ka Maqbara is a tomb in Aurangabad, Maharashtra, India. It was commissioned in 1660 by the "
     "Mughal emperor Aurangzeb in memory of his first wife, Dilras Banu Begum. Because of its strong "
     "resemblance to the marble mausoleum at Agra it is known as the Taj of the Deccan, although it is "
     "smaller and built mostly of plaster-covered stone."),
]

ARTS_AND_LETTERS = [
    ("The Starry Night",
     "The Starry Night is an oil-on-canvas painting by the Dutch Post-Impressionist painter Vincent van "
     "Gogh. Painted in June 1889, it shows the view from the east-facing window of his asylum room at "
     "Saint-Remy-de-Provence just before sunrise, with an imaginary village added below a swirling sky. "
     "It has been in the permanent collection of the Museum of Modern Art in New York City since 1941 and "
     "is one of the most recognised paintings in Western art."),
    ("Vincent van Gogh",
     "Vincent Willem van Gogh (30 March 1853 - 29 July 1890) was a Dutch Post-Impressionist painter who "
     "is among the most famous and influential figures in Western art. Born in Zundert, in the Catholic "
     "south of the Netherlands, the eldest son of a Protestant minister, he worked as an art dealer, a "
     "teacher and a preacher before he began to paint at 27. In just over a decade he created about 2,100 "
     "artworks, most of them in the last two years of his life."),
    ("Starry Night Over the Rhone",
     "Starry Night Over the Rhone is an 1888 oil painting by Vincent van Gogh. It shows the night sky and "
     "the gas lights of Arles reflected in the river Rhone, with a couple strolling on the bank in the "
     "foreground. Painted on the spot a few months before he entered the asylum at Saint-Remy, it was "
     "first shown in Paris in 1889 and now hangs in the Musee d'Orsay."),
    ("Cafe Terrace at Night",
     "Cafe Terrace at Night is an 1888 oil painting by the Dutch artist Vincent van Gogh. It shows a cafe "
     "on the Place du Forum in Arles under a starry sky, with a yellow awning lit by a gas lamp, and it was "
     "the first painting in which he used a starry background. It is in the Kroller-Muller Museum in "
     "Otterlo, the Netherlands."),
    ("Sunflowers (Van Gogh series)",
     "Sunflowers is the name of two series of still life paintings by the Dutch painter Vincent van Gogh. "
     "The first series, painted in Paris in 1887, shows the flowers lying on the ground, while the second, "
     "made in Arles in 1888 and 1889, shows bouquets of sunflowers in a vase, painted to decorate the room "
     "of his friend Paul Gauguin. Versions hang in London, Amsterdam, Munich, Philadelphia and Tokyo."),
    ("Paul Gauguin",
     "Eugene Henri Paul Gauguin (7 June 1848 - 8 May 1903) was a French Post-Impressionist painter. Born in "
     "Paris, he spent his early childhood in Peru, worked as a stockbroker and painted in his spare time "
     "before turning to art full-time. His stay with Van Gogh in Arles in 1888 ended after a quarrel in "
     "which his friend cut off part of his own ear, and he spent his last years in Tahiti and the Marquesas "
     "Islands."),
    ("The Scream",
     "The Scream is the popular name of a composition created by the Norwegian artist Edvard Munch in "
     "1893. It shows an agonised figure with a face like a skull against a blood-red sky over the "
     "Oslofjord, and Munch said it was inspired by a scream he sensed passing through nature. He made "
     "several versions in paint, pastel and lithography, two of which were stolen from Oslo museums and "
     "later recovered."),
    ("Edvard Munch",
     "Edvard Munch (12 December 1863 - 23 January 1944) was a Norwegian painter and printmaker. Born in "
     "the village of Adalsbruk in Loten, he grew up in Kristiania, now Oslo, where his mother and a "
     "sister died of tuberculosis during his childhood. His work on love, anxiety and death, above all The "
     "Scream, was a major influence on German Expressionism, and he left his works to the city of Oslo."),
    ("Van Gogh Museum",
     "The Van Gogh Museum is a Dutch art museum dedicated to the works of Vincent van Gogh and his "
     "contemporaries, on the Museum Square in Amsterdam. Opened in 1973 in a building designed by Gerrit "
     "Rietveld, it holds the largest collection of Van Gogh's paintings and drawings in the world, most of "
     "them from the estate of his brother Theo, and it is one of the most visited museums in the "
     "Netherlands."),
    ("One Hundred Years of Solitude",
     "One Hundred Years of Solitude (Spanish: Cien anos de soledad) is a 1967 novel by the Colombian "
     "author Gabriel Garcia Marquez that tells the multi-generational story of the Buendia family, whose "
     "patriarch founds the fictional town of Macondo. First published in Buenos Aires by Editorial "
     "Sudamericana, it became a landmark of magic realism and of the Latin American Boom and has sold "
     "tens of millions of copies."),
    ("Gabriel Garcia Marquez",
     "Gabriel Jose de la Concordia Garcia Marquez (6 March 1927 - 17 April 2014) was a Colombian novelist, "
     "journalist and screenwriter, known affectionately as Gabo throughout Latin America. Born in "
     "Aracataca, a banana town near the Caribbean coast, he was raised mostly by his maternal "
     "grandparents, whose stories shaped his fiction. He worked as a reporter in Barranquilla and "
     "Bogota, received the Nobel Prize in Literature in 1982 and spent much of his later life in Mexico "
     "City."),
    ("Love in the Time of Cholera",
     "Love in the Time of Cholera (Spanish: El amor en los tiempos del colera) is a novel by the Colombian "
     "author Gabriel Garcia Marquez, published in 1985. Set in an unnamed port city on the Caribbean, it "
     "follows Florentino Ariza and Fermina Daza, whose youthful romance is broken off when she marries a "
     "doctor; Florentino waits more than fifty years to declare his love again. It was made into a film "
     "in 2007."),
    ("Julio Cortazar",
     "Julio Florencio Cortazar (26 August 1914 - 12 February 1984) was an Argentine novelist, short-story "
     "writer and translator. Born in Ixelles, near Brussels, to Argentine parents, he grew up near Buenos "
     "Aires and moved to Paris in 1951, where he lived for the rest of his life. His experimental novel "
     "Hopscotch (1963), which can be read in more than one order, made him a central figure of the Latin "
     "American Boom."),
    ("Jorge Luis Borges",
     "Jorge Luis Borges (24 August 1899 - 14 June 1986) was an Argentine short-story "
     "writer, essayist and poet. Born in Buenos Aires, he spent his youth in Geneva and Spain, and his "
     "collections Ficciones (1944) and The Aleph (1949), full of labyrinths, mirrors and imaginary books, "
     "made him a founder of magic realism. He became director of the National Library of Argentina as he "
     "lost his sight, and he died in Geneva."),
    ("Isabel Allende",
     "Isabel Allende Llona (born 2 August 1942) is a Chilean-American writer. Born in Lima, Peru, where her "
     "father was a diplomat, she worked as a journalist in Chile until the 1973 coup against her father's "
     "cousin, President Salvador Allende, forced her into exile in Venezuela. Her first novel, The House "
     "of the Spirits (1982), began as a letter to her dying grandfather, and her books have sold tens of "
     "millions of copies."),
    ("The House of the Spirits",
     "The House of the Spirits (Spanish: La casa de los espiritus) is the debut novel of the Chilean writer "
     "Isabel Allende, published in 1982. It follows four generations of the Trueba family, from the "
     "clairvoyant Clara to her granddaughter Alba, through the social and political upheavals of an "
     "unnamed South American country that ends in a military coup. It was filmed in 1993 with Meryl "
     "Streep and Jeremy Irons."),
    ("Pedro Paramo",
     "Pedro Paramo is a novel by the Mexican writer Juan Rulfo, published in 1955. It tells of a man who "
     "travels to his dead mother's home town, Comala, to find his father, only to discover a ghost town "
     "full of murmuring spirits. Told in fragments that move between the living and the dead, it was a "
     "major influence on the Latin American Boom, and Garcia Marquez said he could recite it by heart."),
    ("Chronicle of a Death Foretold",
     "Chronicle of a Death Foretold (Spanish: Cronica de una muerte anunciada) is a novella by Gabriel "
     "Garcia Marquez, published in 1981. It reconstructs, in the manner of a journalist's investigation, "
     "the murder of Santiago Nasar by the twin brothers of a bride returned to her family on her wedding "
     "night, a killing that the whole town knew was coming and did nothing to prevent."),
    ("War and Peace",
     "War and Peace is a novel by the Russian author Leo Tolstoy. Set during the Napoleonic Wars, it "
     "chronicles the French invasion of Russia in 1812 and its impact on Tsarist society through the "
     "stories of five aristocratic families, and it mixes fiction with chapters of historical and "
     "philosophical argument. Portions were serialised from 1865, and the whole novel was published in "
     "1869. It is often called one of the greatest novels ever written."),
    ("Leo Tolstoy",
     "Count Lev Nikolayevich Tolstoy (9 September 1828 - 20 November 1910), usually called Leo Tolstoy in "
     "English, was a Russian writer regarded as one of the greatest authors of all time. Born on his "
     "family estate south of Moscow, he served in the Crimean War before turning to fiction, and in later "
     "life he became a moral thinker and a Christian pacifist. At 82 he left home in secret by train and "
     "died of pneumonia days later at Astapovo, a small provincial station."),
    ("Anna Karenina",
     "Anna Karenina is a novel by the Russian author Leo Tolstoy, first published in book form in 1878. It "
     "tells of the affair of the married aristocrat Anna Karenina with the cavalry officer Count Vronsky, "
     "set against the happier marriage of the landowner Levin and Kitty. Trains appear throughout the "
     "story, and it ends with Anna throwing herself under a train at a railway station near Moscow."),
    ("War and Peace (film series)",
     "War and Peace is a Soviet epic war film in four parts, written and directed by Sergei Bondarchuk and "
     "released between 1965 and 1967. Adapted from the novel by Tolstoy, with Bondarchuk himself as "
     "Pierre Bezukhov, it used thousands of soldiers as extras for its battle scenes and is one of the "
     "most expensive films ever made. It won the Academy Award for Best Foreign Language Film."),
    ("Yasnaya Polyana",
     "Yasnaya Polyana is a writer's home and museum about 12 kilometres southwest of Tula, Russia, and 200 "
     "kilometres from Moscow. It was the estate where Leo Tolstoy was born, where he wrote War and Peace "
     "and Anna Karenina, and where he ran a school for peasant children. He is buried in its forest in a "
     "simple grave without a cross or headstone."),
    ("Fyodor Dostoevsky",
     "Fyodor Mikhailovich Dostoevsky (11 November 1821 - 9 February 1881) was a Russian novelist, "
     "short-story writer and journalist. Born in Moscow, he was sentenced to death in 1849 for his part in "
     "a socialist circle, reprieved at the last moment and sent to a Siberian labour camp. His novels, "
     "among them Crime and Punishment and The Brothers Karamazov, explore faith, guilt and free will, and "
     "he died in Saint Petersburg."),
    ("Anton Chekhov",
     "Anton Pavlovich Chekhov (29 January 1860 - 15 July 1904) was a Russian playwright and short-story "
     "writer. Born in Taganrog on the Sea of Azov, he practised as a physician throughout his literary "
     "career. His plays The Seagull, Uncle Vanya, Three Sisters and The Cherry Orchard changed modern "
     "drama, and he died of tuberculosis at the German spa town of Badenweiler."),
    ("Crime and Punishment",
     "Crime and Punishment is a novel by the Russian author Fyodor Dostoevsky, first published in twelve "
     "monthly instalments in the literary journal The Russian Messenger in 1866. It follows Rodion "
     "Raskolnikov, a poor former student in Saint Petersburg, who murders a pawnbroker to prove a theory "
     "of extraordinary men and is then tormented by guilt until he confesses."),
    ("Ivan Turgenev",
     "Ivan Sergeyevich Turgenev (9 November 1818 - 3 September 1883) was a Russian novelist, short-story "
     "writer and playwright. Born in Oryol to a wealthy landowning family, he studied in Saint Petersburg "
     "and Berlin. His novel Fathers and Sons (1862) popularised the word nihilist, and he spent much of his "
     "later life in France, dying at Bougival near Paris."),
    ("Harry Potter",
     "Harry Potter is a series of seven fantasy novels written by the British author J. K. Rowling. The "
     "novels chronicle the lives of the young wizard Harry Potter and his friends Hermione Granger and Ron "
     "Weasley, students at Hogwarts School of Witchcraft and Wizardry, and their struggle against the dark "
     "wizard Lord Voldemort. Since the first novel appeared in 1997 the books have sold more than 500 "
     "million copies, the best-selling book series in history."),
    ("J. K. Rowling",
     "Joanne Rowling (born 31 July 1965), known by her pen name J. K. Rowling, is a British author and "
     "philanthropist. Born in Yate, Gloucestershire, she studied French and Classics at the University of "
     "Exeter and later worked as a researcher for Amnesty International in London. She conceived the idea "
     "of a boy wizard on a delayed train from Manchester to London in 1990 and wrote much of the first "
     "book while living in Edinburgh as a single mother."),
    ("Harry Potter and the Philosopher's Stone",
     "Harry Potter and the Philosopher's Stone is a fantasy novel written by the British author J. K. "
     "Rowling, the first in the Harry Potter series. It follows Harry, an orphan raised by his unkind aunt "
     "and uncle, who learns on his eleventh birthday that he is a wizard. Published by Bloomsbury in June "
     "1997, it was released in the United States as Harry Potter and the Sorcerer's Stone."),
    ("J. R. R. Tolkien",
     "John Ronald Reuel Tolkien (3 January 1892 - 2 September 1973) was an English writer and philologist. "
     "Born in Bloemfontein in the Orange Free State, he moved to England as a child and studied at Exeter "
     "College, Oxford, before serving in the First World War. He was professor of Anglo-Saxon at Oxford and "
     "the author of The Hobbit and The Lord of the Rings."),
    ("C. S. Lewis",
     "Clive Staples Lewis (29 November 1898 - 22 November 1963) was a British writer, literary scholar and "
     "Anglican lay theologian. Born in Belfast, he was wounded in the First World War, studied at "
     "University College, Oxford, and taught English literature at Magdalen College, Oxford, and later at "
     "Cambridge. He wrote The Chronicles of Narnia, a series of seven fantasy novels for children."),
    ("Bloomsbury Publishing",
     "Bloomsbury Publishing plc is a British worldwide publishing house of fiction and non-fiction. It was "
     "founded in 1986 by Nigel Newton and others and is based in Bloomsbury, London. It is best known for "
     "publishing the Harry Potter series, whose first book it accepted in 1996 after a dozen other "
     "publishers had turned it down, and it also publishes academic and professional works."),
    ("Roald Dahl",
     "Roald Dahl (13 September 1916 - 23 November 1990) was a British author of children's books and "
     "short stories. Born in Llandaff, Cardiff, to Norwegian parents, he went to Repton School instead of "
     "university, served as a fighter pilot in the Royal Air Force during the Second World War, and "
     "became one of the best-selling authors for children with books such as Charlie and the Chocolate "
     "Factory and Matilda."),
    ("Harry Potter (film series)",
     "Harry Potter is a film series based on the novels by J. K. Rowling. Produced by David Heyman and "
     "distributed by Warner Bros., the eight films began with Harry Potter and the Philosopher's Stone in "
     "2001 and ended with Harry Potter and the Deathly Hallows - Part 2 in 2011. Daniel Radcliffe, Rupert "
     "Grint and Emma Watson starred as the three young friends, and it is one of the highest-grossing film "
     "series of all time."),
    ("Philip Pullman",
     "Philip Pullman (born 19 October 1946) is an English writer. Born in Norwich, he spent parts of his "
     "childhood in Zimbabwe and Australia, studied English at Exeter College, Oxford, and taught at a "
     "middle school before writing full-time. He is best known for the fantasy trilogy His Dark "
     "Materials, whose first book, Northern Lights, won the Carnegie Medal in 1995."),
    ("Manchester United F.C.",
     "Manchester United Football Club is a professional football club based in Old Trafford, Greater "
     "Manchester, England, that competes in the Premier League. Under Alex Ferguson, who managed the club "
     "for 26 years from 1986, it won 13 league titles, and in 1999 it became the first English club to win "
     "the treble of the Premier League, the FA Cup and the UEFA Champions League. It is one of the most "
     "widely supported football clubs in the world."),
    ("Alex Ferguson",
     "Sir Alexander Chapman Ferguson (born 31 December 1941) is a Scottish former football manager and "
     "player. Born in Govan, Glasgow, he played as a striker for Dunfermline Athletic and Rangers. His "
     "first job in management came in 1974 at East Stirlingshire, a part-time side, after which he moved "
     "to St Mirren and then to Aberdeen, where he won the European Cup Winners' Cup in 1983. He was "
     "knighted in 1999."),
    ("Aberdeen F.C.",
     "Aberdeen Football Club is a Scottish professional football club based in Aberdeen that plays its "
     "home games at Pittodrie Stadium. Under the manager Alex Ferguson in the 1980s it broke the dominance "
     "of the Glasgow clubs, winning three Scottish league titles and the 1983 European Cup Winners' Cup, "
     "in which it beat Real Madrid in the final in Gothenburg."),
    ("Matt Busby",
     "Sir Alexander Matthew Busby (26 May 1909 - 20 January 1994) was a Scottish football player and "
     "manager who managed Manchester United from 1945 to 1969 and again in the 1970-71 season. Born in "
     "Orbiston, a mining village in Lanarkshire, he played as a wing half for Manchester City before "
     "turning to management. He rebuilt the team after the Munich air disaster of 1958 and won the European "
     "Cup in 1968."),
    ("1999 UEFA Champions League final",
     "The 1999 UEFA Champions League final was played on 26 May 1999 at the Camp Nou in Barcelona between "
     "Manchester United and Bayern Munich. Trailing to an early Mario Basler free kick, United scored twice "
     "in stoppage time, through Teddy Sheringham and Ole Gunnar Solskjaer, to win 2-1 and complete the "
     "treble, one of the most dramatic finishes in the history of the competition."),
    ("Manchester City F.C.",
     "Manchester City Football Club is a professional football club based in Manchester, England, that "
     "competes in the Premier League. Founded in 1880 as St. Mark's (West Gorton), it plays at the Etihad "
     "Stadium. After its purchase by the Abu Dhabi United Group in 2008 it became one of the richest clubs "
     "in the world, and under the manager Pep Guardiola it won the treble of the league, the FA Cup and "
     "the Champions League in 2023."),
    ("Arsene Wenger",
     "Arsene Wenger (born 22 October 1949) is a French football manager and former player who managed "
     "Arsenal from 1996 to 2018, the longest and most successful spell in the club's history. Born in "
     "Strasbourg, he began his managerial career at Nancy in 1984 and then led Monaco to the French title "
     "before a spell in Japan with Nagoya Grampus Eight. His 2003-04 Arsenal team went through the league "
     "season unbeaten."),
    ("Jose Mourinho",
     "Jose Mario dos Santos Mourinho Felix (born 26 January 1963) is a Portuguese football manager. Born in "
     "Setubal, he worked as an interpreter and assistant to Bobby Robson before his first managerial job "
     "at Benfica in 2000. He won the Champions League with Porto in 2004 and with Inter Milan in 2010, "
     "completing a treble, and he later managed Chelsea, Real Madrid, Manchester United and Tottenham "
     "Hotspur."),
    ("Ole Gunnar Solskjaer",
     "Ole Gunnar Solskjaer (born 26 February 1973) is a Norwegian football manager and former player. Born "
     "in Kristiansund, he spent eleven years as a striker at Manchester United and scored the winning goal "
     "of the 1999 Champions League final. After coaching United's reserve team he began his career as a "
     "senior manager with Molde in 2011, winning two Norwegian league titles, and he managed Manchester "
     "United from 2018 to 2021."),
]

PASSAGES = FILMS + MUSIC + COMPANIES + UNIVERSITIES + SCIENCE + BUILDINGS + ARTS_AND_LETTERS


def _bridge(question: str, answer: str, first: str, second: str) -> dict:
    return {"question": question, "answer": answer, "kind": "bridge", "support": [first, second]}


def _comparison(question: str, answer: str, a: str, b: str) -> dict:
    return {"question": question, "answer": answer, "kind": "comparison", "support": [a, b]}


QUESTIONS = [
    _bridge("In what city was the director of the film Jaws born?", "Cincinnati",
            "Jaws (film)", "Steven Spielberg"),
    _bridge("In which city was the director of The Godfather born?", "Detroit",
            "The Godfather", "Francis Ford Coppola"),
    _bridge("The band that recorded the album Abbey Road was formed in which city?", "Liverpool",
            "Abbey Road", "The Beatles"),
    _bridge("In which city was the composer of the opera The Magic Flute born?", "Salzburg",
            "The Magic Flute", "Wolfgang Amadeus Mozart"),
    _bridge("What is the capital of the country where Nokia has its headquarters?", "Helsinki",
            "Nokia", "Finland"),
    _bridge("In which city is the company that designs the iPhone headquartered?", "Cupertino",
            "iPhone", "Apple Inc."),
    _bridge("In what year was the university where Mikhail Gorbachev studied law founded?", "1755",
            "Mikhail Gorbachev", "Lomonosov Moscow State University"),
    _bridge("In which city was the architect of the Sydney Opera House born?", "Copenhagen",
            "Sydney Opera House", "Jorn Utzon"),
    _bridge("In which city was the engineer whose company built the Eiffel Tower born?", "Dijon",
            "Eiffel Tower", "Gustave Eiffel"),
    _bridge("In which city was the author of the novel that inspired Blade Runner born?", "Chicago",
            "Blade Runner", "Philip K. Dick"),
    _bridge("In which town was the scientist who discovered penicillin born?", "Darvel",
            "Penicillin", "Alexander Fleming"),
    _bridge("With which club did the manager who led Manchester United to the 1999 treble begin his "
            "managerial career?", "East Stirlingshire", "Manchester United F.C.", "Alex Ferguson"),
    _bridge("In which town was the author of One Hundred Years of Solitude born?", "Aracataca",
            "One Hundred Years of Solitude", "Gabriel Garcia Marquez"),
    _bridge("In which town was the architect of the Sagrada Familia born?", "Reus",
            "Sagrada Familia", "Antoni Gaudi"),
    _bridge("Who was the father of the Mughal emperor who commissioned the Taj Mahal?", "Jahangir",
            "Taj Mahal", "Shah Jahan"),
    _bridge("What was the name of the only child of the founder of Ford Motor Company?", "Edsel",
            "Ford Motor Company", "Henry Ford"),
    _bridge("Which college did the inventor of the World Wide Web attend?", "Queen's College",
            "World Wide Web", "Tim Berners-Lee"),
    _bridge("Where was the writer of the song Bohemian Rhapsody born?", "Zanzibar",
            "Bohemian Rhapsody", "Freddie Mercury"),
    _bridge("At which railway station did the author of War and Peace die?", "Astapovo",
            "War and Peace", "Leo Tolstoy"),
    _bridge("From which university did the commander of Apollo 11 receive his bachelor's degree?", "Purdue",
            "Apollo 11", "Neil Armstrong"),
    _bridge("In which village was the painter of The Starry Night born?", "Zundert",
            "The Starry Night", "Vincent van Gogh"),
    _bridge("Which university did the author of the Harry Potter novels graduate from?",
            "University of Exeter", "Harry Potter", "J. K. Rowling"),
    _comparison("Which was founded first, Harvard University or Yale University?", "Harvard University",
                "Harvard University", "Yale University"),
    _comparison("Which was founded first, Lomonosov Moscow State University or Saint Petersburg State "
                "University?", "Saint Petersburg State University",
                "Lomonosov Moscow State University", "Saint Petersburg State University"),
    _comparison("Which band was formed first, the Rolling Stones or Pink Floyd?", "The Rolling Stones",
                "The Rolling Stones", "Pink Floyd"),
    _comparison("Which film was released first, Jaws 2 or The Godfather Part II?", "The Godfather Part II",
                "Jaws 2", "The Godfather Part II"),
    _comparison("Who was born first, Jorge Luis Borges or Isabel Allende?", "Jorge Luis Borges",
                "Jorge Luis Borges", "Isabel Allende"),
    _comparison("Which company was founded first, General Motors or Chrysler?", "General Motors",
                "General Motors", "Chrysler"),
    _comparison("Which was completed first, Casa Batllo or Casa Mila?", "Casa Batllo",
                "Casa Batllo", "Casa Mila"),
    _comparison("Who was born first, John Glenn or Yuri Gagarin?", "John Glenn",
                "John Glenn", "Yuri Gagarin"),
    _comparison("Who was born first, Joseph Haydn or Antonio Salieri?", "Joseph Haydn",
                "Joseph Haydn", "Antonio Salieri"),
]


def generate(seed: int = 0) -> tuple[list[tuple[str, str]], list[dict]]:
    """Every passage once, in an order shuffled by `seed`, and the questions (copies)."""
    passages = list(PASSAGES)
    random.Random(seed).shuffle(passages)
    return passages, [dict(q, support=list(q["support"])) for q in QUESTIONS]


def _norm(text: str) -> str:
    import re

    return " ".join(re.sub(r"[^0-9a-z]+", " ", text.lower()).split())


def check() -> list[str]:
    """Problems with the data: duplicate titles, unknown supports, an answer missing from its
    passage, a bridge answer already in the first passage, an answer in a non-supporting passage,
    a paragraph outside 50-150 words."""
    problems = []
    texts = dict(PASSAGES)
    if len(texts) != len(PASSAGES):
        problems.append("duplicate titles")
    for title, text in PASSAGES:
        words = len(text.split())
        if not 50 <= words <= 150:
            problems.append(f"{title}: {words} words")
    for q in QUESTIONS:
        want = f" {_norm(q['answer'])} "
        for title in q["support"]:
            if title not in texts:
                problems.append(f"{q['question']}: no passage {title!r}")
        if any(t not in texts for t in q["support"]):
            continue
        holders = [t for t in q["support"] if want in f" {_norm(texts[t])} "]
        if q["kind"] == "bridge" and holders != [q["support"][1]]:
            problems.append(f"{q['question']}: answer in {holders}")
        if q["kind"] == "comparison" and not holders:
            problems.append(f"{q['question']}: answer in neither passage")
        leaks = [t for t, x in PASSAGES if t not in q["support"] and want in f" {_norm(x)} "]
        if leaks:
            problems.append(f"{q['question']}: answer also in {leaks}")
    return problems


if __name__ == "__main__":
    passages, questions = generate()
    kinds = {}
    for q in questions:
        kinds[q["kind"]] = kinds.get(q["kind"], 0) + 1
    print(f"{len(passages)} passages, {len(questions)} questions {kinds}; "
          f"words per passage {min(len(t.split()) for _, t in passages)}-"
          f"{max(len(t.split()) for _, t in passages)}")
    for problem in check():
        print("PROBLEM:", problem)
